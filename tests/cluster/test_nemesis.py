"""The nemesis run: random faults, seeded and logged, while matches are played; then the
invariants (``tests/cluster/nemesis.py``).

Bounded in ``make test`` (``CLUSTER_NEMESIS_S``, default 150 s of faults); ``make cluster``
runs it for an hour (over 1,000 matches at about 20 a minute on a busy 2-core
machine). ``CLUSTER_NEMESIS_SEED`` replays a schedule; the log of every fault is written
beside the drill table.

The matches are of any two house bots: remote (on ``bots``), connected (on ``conn``,
streams to either gRPC server), hosted (uploads the workers run in their sandbox), or
one of each kind; the faults include kills of connected
bots and kills, clean restarts and stops of either gRPC server (``nemesis.KINDS``).

Checked at the end, from the database and the replays: every match finished or errored
with a reason (none lost, none stuck), exactly one result per match, rating sums
conserved, ``rerate --check``, and no rating moved by a match whose replay charges a
seat that neither a kill of that seat's bot nor the witness rule explains
(``nemesis.judge``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from pathlib import Path

import pytest

from tests.cluster.conftest import ROWS, DrillRow
from tests.cluster.nemesis import Nemesis, judge
from tests.cluster.stack import BOT_PORTS, CONNECTED, GRPC_SERVERS, Stack
from tests.cluster.test_drills import FULL, SETTLE_S
from tests.support.workers import wait_until

NEMESIS_S = float(os.environ.get("CLUSTER_NEMESIS_S", "3600" if FULL else "150"))
SEED = int(os.environ.get("CLUSTER_NEMESIS_SEED", "37"))
OPEN = 6  # matches kept open while the nemesis runs
TEND_S = 30.0  # how often the house bots' owner looks at them


def _revive(stack: Stack) -> None:
    """After the last fault: every link healed, every process of the cluster running."""
    stack.net.heal_all()
    for name in ("eng1", "eng2", *(f"bot{i}" for i in range(len(BOT_PORTS)))):
        if not stack.services[name].alive():
            stack.services[name].start()
        stack.wait_port(name)
    if not stack.services["redis"].alive():
        stack.start_redis(persist=False)
    if not stack.services["postgres"].alive():
        stack.start_postgres()
    for name in (*GRPC_SERVERS, "web", "beat"):
        if not stack.services[name].alive():
            stack.services[name].start()
    for name in GRPC_SERVERS:
        stack.services[name].kill(signal.SIGCONT)  # a stop the run ended in
    for name in (f"cbot{i}" for i in range(CONNECTED)):
        if not stack.services[name].alive():
            stack.services[name].start()
    for name in ("w1", "w2"):
        if not stack.services[name].alive():
            stack.restart_worker(name)


# The faults, then the settling (SETTLE_S * 2 at most) and the checks, on a loaded machine.
@pytest.mark.timeout(int(NEMESIS_S + 2 * SETTLE_S + 600))
def test_nemesis(stack: Stack) -> None:
    log_path = stack.tmp / "nemesis.jsonl"
    ids: list[int] = []
    lifted: list[str] = []
    started = tended = time.monotonic()

    def tend() -> None:
        """The house bots' owner, every TEND_S: lift the suspensions the faults earned, and
        start again a connected bot that stopped (a suspended one is told so and exits)."""
        nonlocal tended
        if time.monotonic() - tended < TEND_S:
            return
        tended = time.monotonic()
        lifted.extend(stack.drive("lift"))
        for name in (f"cbot{i}" for i in range(CONNECTED)):
            if not stack.services[name].alive():
                stack.services[name].start()

    def feed() -> None:
        """Keep about OPEN matches open (a failure to create them now is the fault's)."""
        try:
            tend()
            found = stack.statuses(ids) if ids else {}
            waiting = len(ids) - found.get("finished", 0) - found.get("errored", 0)
            if waiting < OPEN:
                ids.extend(stack.drive("create", "--count", str(OPEN - waiting + 2),
                                       "--seed", str(SEED * 100_000 + len(ids)),
                                       "--pool", "any"))  # fmt: skip
        except Exception as exc:
            print(f"nemesis: no new matches now: {str(exc)[-300:]}", file=sys.stderr)

    feed()
    nemesis = Nemesis(stack, SEED, log_path)
    nemesis.run(NEMESIS_S, between=feed)
    _revive(stack)
    healed = time.monotonic()
    try:
        wait_until(lambda: stack.settled(ids), SETTLE_S * 2,
                   "nemesis: every match finished or errored", poll_s=2.0)  # fmt: skip
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{stack.diagnosis(ids)}") from None
    settled = time.monotonic()
    report = stack.drive("check", "--ids", ",".join(map(str, ids)), timeout_s=600)
    charges = stack.drive("charges", "--ids", ",".join(map(str, ids)), timeout_s=600)
    wrong = judge(charges, nemesis.injected)
    summary = {
        "seed": SEED,
        "faults": nemesis.counts(),
        "requested": report["requested"],
        "finished": report["finished"],
        "errored": report["errored"],
        "released": report["released"],
        "finished_with_connected_seats": report["finished_with_connected"],
        "finished_with_hosted_seats": report["finished_with_hosted"],
        "lost": report["missing"] + report["unsettled"],
        "doubled": len(report["doubled"]) + len(report["counted_twice"]),
        "stuck": report["stuck"],
        "charged_and_explained": len(charges) - len({w["match"] for w in wrong}),
        "rated_by_infrastructure": len({w["match"] for w in wrong if w["moved"]}),
        "rerate": report["rerate"],
        "suspensions_lifted": len(lifted),
    }
    print(f"\nnemesis: {json.dumps(summary)}\nwrongly charged: {json.dumps(wrong)}",
          file=sys.stderr)  # fmt: skip
    kept = os.environ.get("CLUSTER_REPORT")
    if kept:
        shutil.copy(log_path, Path(kept).with_suffix(".nemesis.jsonl"))
        Path(kept).with_suffix(".nemesis.json").write_text(
            json.dumps({**summary, "wrong": wrong}, indent=1) + "\n"
        )
    ROWS.append(
        DrillRow(
            drill=f"nemesis {NEMESIS_S:.0f} s, seed {SEED}",
            requested=report["requested"], finished=report["finished"],
            errored=report["errored"], lost=summary["lost"], doubled=summary["doubled"],
            stuck=report["stuck"], rated_by_infrastructure=summary["rated_by_infrastructure"],
            recovery_s=settled - healed, minutes=(settled - started) / 60,
        )
    )  # fmt: skip
    assert summary["lost"] == 0 and summary["doubled"] == 0 and summary["stuck"] == 0, summary
    assert all(error for _, error in report["errors"]), report["errors"]
    assert report["results"] == report["finished"] and not report["finished_without_result"]
    assert report["rating_sum"] == report["rating_sum_expected"], report
    assert report["rerate"] == "ok", report
    assert [w for w in wrong if w["moved"]] == [], wrong
