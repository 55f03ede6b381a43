"""An engine replica that died is routed around at once and taken back when it answers.

Two real engines on loopback, three real random bots: the first engine is
killed, then a run of new games each starts its turn on it or on the other.
Only the first game may pay for the dead address (the runner marks it down);
every later one goes straight to the live replica, without a single retry
of the dead one. When an engine serves again on the dead address, the pool's
health probe puts it back in turn and games are created there again.
"""

from __future__ import annotations

import logging
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import Proc, start_bot, start_engine
from tests.support.workers import wait_until
from workers.runner import EnginePool, TimeControl, run_match

TC = TimeControl(decision_s=2.0, bank_s=5.0, handshake_s=5.0, engine_resume_s=20.0)
GAMES = 6


@pytest.fixture
def bots(tmp_path: Path) -> Iterator[list[str]]:
    procs = [
        start_bot("examples.random_bot", tmp_path, f"rb{i}", "--seed", str(i)) for i in range(2)
    ]
    yield [p.address for p in procs]
    for p in procs:
        p.stop()


def test_a_dead_replica_is_routed_around_and_probed_back(
    bots: list[str], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    doomed = start_engine(tmp_path, "doomed")
    spare = start_engine(tmp_path, "spare")
    address, port = doomed.address, doomed.port
    pool = EnginePool(f"{doomed.address},{spare.address}", first=0)
    back: list[Proc] = []
    try:
        doomed.stop(signal.SIGKILL)
        caplog.set_level(logging.WARNING, logger="workers.runner")
        used = []
        for seed in range(GAMES):
            outcome = run_match(pool, bots, seed=seed, time_control=TC)
            used.append(outcome.replay["match"]["engines"])
        assert all(engines == [spare.address] for engines in used), used
        tries = [r for r in caplog.records if address in r.getMessage()]
        # The first game found it dead (its retries); no later game asked it again.
        assert len(tries) <= 1 + TC.engine_retries, [r.getMessage() for r in tries]
        assert pool.down() == [address]

        back.append(start_engine(tmp_path, "back", listen=f"127.0.0.1:{port}"))
        wait_until(lambda: not pool.down(), 30, "the probe puts the engine back")
        again = [run_match(pool, bots, seed=s, time_control=TC) for s in range(2)]
        assert [address] in [o.replay["match"]["engines"] for o in again]
    finally:
        pool.close()
        for proc in (doomed, spare, *back):
            proc.stop(signal.SIGKILL)
