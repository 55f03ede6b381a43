"""Engine death mid-match: the runner re-creates the game and the result is the same.

The runner keeps every answer the engine applied; when its engine is killed
(SIGKILL, no goodbye) it creates the game again - on the second engine of the
pool, or on the same address once an engine is back there - re-applies those
answers and carries on. The bots keep seeing the first game id, so they
never notice. The proof: the replay equals the replay of an undisturbed run
of the same seed and bots, event for event, and it verifies.
"""

from __future__ import annotations

import signal
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import Proc, start_engine
from workers.runner import EnginePool, EngineUnavailable, TimeControl, run_match, verify_replay
from workers.runner import replay as replay_io

TC = TimeControl(decision_s=2.0, bank_s=5.0, handshake_s=5.0, engine_resume_s=30.0)
SEED = 29
KILL_AT_PLY = 12


def game_of(replay: dict[str, Any]) -> dict[str, Any]:
    """What must not change when the game is resumed: everything but timings, addresses
    and the protocol the seats were played with."""
    same = replay_io.without_timings(replay)
    keep = ("decisions", "config", "seats", "cave", "sleeved", "first_lead", "events", "result")
    return {k: same[k] for k in keep}


@pytest.fixture
def undisturbed(engine: Proc, random_bots: list[Proc]) -> dict[str, Any]:
    bots = [b.address for b in random_bots]
    outcome = run_match(engine.address, bots, seed=SEED, time_control=TC)
    assert outcome.resumes == 0 and outcome.decisions > KILL_AT_PLY
    return outcome.replay


@pytest.mark.parametrize("streams", [True, False], ids=["play-stream", "unary"])
def test_game_moves_to_the_second_engine(
    undisturbed: dict[str, Any], random_bots: list[Proc], tmp_path: Path, streams: bool
) -> None:
    """Over the game's Play stream (broken by the engine's death) and by unary calls."""
    doomed = start_engine(tmp_path, "doomed")
    spare = start_engine(tmp_path, "spare")
    pool = EnginePool(f"{doomed.address},{spare.address}", first=0)  # the game starts on doomed

    def kill(ply: int) -> None:
        if ply >= KILL_AT_PLY and doomed.alive():
            doomed.stop(signal.SIGKILL)

    try:
        outcome = run_match(
            pool,
            [b.address for b in random_bots],
            seed=SEED,
            time_control=replace(TC, streams=streams),
            on_progress=kill,
        )
    finally:
        pool.close()
        doomed.stop(signal.SIGKILL)
    try:
        assert not doomed.alive()
        assert outcome.resumes == 1
        assert outcome.replay["match"]["engines"] == [doomed.address, spare.address]
        assert outcome.faults == []  # the bots never noticed
        assert game_of(outcome.replay) == game_of(undisturbed)
        verdict = verify_replay(spare.address, outcome.replay)
        assert verdict.ok, verdict.first_difference
    finally:
        spare.stop()


def test_game_waits_for_its_engine_to_come_back(
    undisturbed: dict[str, Any], random_bots: list[Proc], tmp_path: Path
) -> None:
    first = start_engine(tmp_path, "first")
    port = first.port
    restarted: list[Proc] = []

    def restart_later() -> None:
        restarted.append(start_engine(tmp_path, "again", listen=f"127.0.0.1:{port}"))

    waiter = threading.Timer(1.0, restart_later)

    def kill(ply: int) -> None:
        if ply >= KILL_AT_PLY and first.alive():
            first.stop(signal.SIGKILL)
            waiter.start()  # back on the same address a second later

    try:
        outcome = run_match(
            first.address,
            [b.address for b in random_bots],
            seed=SEED,
            time_control=TC,
            on_progress=kill,
        )
        waiter.join(30)
    finally:
        waiter.cancel()
        first.stop(signal.SIGKILL)
    try:
        assert outcome.resumes == 1
        assert outcome.replay["match"]["engines"] == [first.address, first.address]
        assert outcome.faults == []
        assert game_of(outcome.replay) == game_of(undisturbed)
    finally:
        for proc in restarted:
            proc.stop()


def test_no_engine_back_in_time_is_retryable(random_bots: list[Proc], tmp_path: Path) -> None:
    engine = start_engine(tmp_path, "gone")

    def kill(ply: int) -> None:
        if ply >= 3 and engine.alive():
            engine.stop(signal.SIGKILL)

    tc = TimeControl(decision_s=2.0, bank_s=5.0, engine_resume_s=1.0)
    with pytest.raises(EngineUnavailable, match="no engine took the game") as info:
        run_match(
            engine.address, [b.address for b in random_bots], seed=3, time_control=tc,
            on_progress=kill,
        )  # fmt: skip
    assert info.value.retryable
