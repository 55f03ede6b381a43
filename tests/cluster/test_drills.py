"""Fault drills on the ladder run as nine machines (``tests/cluster/stack.py``).

Each drill creates a fixed number of matches, breaks something while they are
played, heals it, waits until every match is finished or errored, and checks from
the database and the broker: every match finished or errored with a reason,
exactly one result per match, no rating moved by an infrastructure fault (the
house bots never fault, so any charged fault is the infrastructure's), rating
sums conserved, ``rerate --check``, the queues drained, nothing stuck.

The bounded set runs in ``make test``; ``make cluster`` (``CLUSTER_FULL=1``)
adds the longer drills and bigger numbers. Waits are bounded by what each
drill's recovery needs (leases, the janitor's interval), never by speed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.cluster.conftest import ROWS, DrillRow
from tests.cluster.stack import BOT_PORTS, PG_PORT, REDIS_PORT, Stack
from tests.support.workers import children_of, wait_until

FULL = os.environ.get("CLUSTER_FULL") == "1"
SCALE = 3 if FULL else 1
SETTLE_S = 240.0  # a few leases, retries and janitor passes, on a loaded machine
full_only = pytest.mark.skipif(not FULL, reason="full drill set: make cluster")


def playing_on(stack: Stack, worker: str) -> bool:
    """Is the worker's pool playing a match right now (a running claim of its child)?"""
    import psycopg

    service = stack.services[worker]
    if not service.alive() or service.proc is None:
        return False
    claims = [f"%:{pid}" for pid in children_of(service.proc.pid)]
    if not claims:
        return False
    with psycopg.connect(host=str(stack.pg_socket_dir), user="postgres", dbname="ladder") as conn:
        row = conn.execute(
            "SELECT count(*) FROM matches_match"
            " WHERE status = 'running' AND claimed_by LIKE ANY(%s)",
            (claims,),
        ).fetchone()
    return bool(row and row[0])


def drill(
    stack: Stack,
    name: str,
    count: int,
    fault: Callable[[list[int]], float | None] | None = None,
    *,
    countdown: float = 0.0,
    settle_s: float = SETTLE_S,
    pool: str = "remote",
) -> dict[str, Any]:
    """Create ``count`` matches of ``pool``'s bots (``drive create --pool``), apply
    ``fault`` (it returns when it healed), check."""
    started = time.monotonic()
    args = ["create", "--count", str(count), "--seed", str(len(ROWS) + 1), "--pool", pool]
    ids: list[int] = stack.drive(*args, *(["--countdown", str(countdown)] if countdown else []))
    healed = fault(ids) if fault is not None else None
    healed = healed or time.monotonic()
    try:
        wait_until(lambda: stack.settled(ids), settle_s,
                   f"{name}: every match finished or errored", poll_s=1.0)  # fmt: skip
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{stack.diagnosis(ids)}") from None
    settled = time.monotonic()
    report = stack.drive("check", "--ids", ",".join(map(str, ids)))
    ROWS.append(
        DrillRow(
            drill=name,
            requested=count,
            finished=report["finished"],
            errored=report["errored"],
            lost=report["missing"] + report["unsettled"],
            doubled=len(report["doubled"]) + len(report["counted_twice"]),
            stuck=report["stuck"],
            rated_by_infrastructure=len(report["rated_by_infrastructure"]),
            recovery_s=max(0.0, settled - healed),
            minutes=(settled - started) / 60,
        )
    )
    print(f"\n{name}: {json.dumps(report)}", file=sys.stderr)
    assert report["missing"] == 0 and report["unsettled"] == 0, report
    assert all(error for _, error in report["errors"]), report["errors"]
    assert report["results"] == report["finished"] and not report["finished_without_result"]
    assert report["doubled"] == [] and report["counted_twice"] == [], report
    assert report["rated_by_infrastructure"] == [], report
    assert report["rating_sum"] == report["rating_sum_expected"], report
    assert report["rerate"] == "ok", report
    assert report["stuck"] == 0, report
    # The queues drain: a periodic task may be in a worker's hands at any one moment (an
    # unacknowledged message for a second); a message lost in the fault stays for good.
    try:
        wait_until(lambda: not stack.broker_backlog(), 60,
                   f"{name}: the broker's queues drained", poll_s=1.0)  # fmt: skip
    except AssertionError as exc:  # what stayed, and what the workers and beat said
        raise AssertionError(f"{exc}\n{stack.diagnosis(ids)}") from None
    return report


def test_baseline(stack: Stack) -> None:
    report = drill(stack, "baseline", 4 * SCALE)
    assert report["finished"] == report["requested"], report["errors"]


def test_worker_killed_again_and_again(stack: Stack) -> None:
    """kill -9 of a worker's main process and pool children while it plays, repeatedly."""

    def kills(ids: list[int]) -> float:
        for _ in range(SCALE):
            wait_until(lambda: playing_on(stack, "w1"), 120, "w1 plays a match", poll_s=0.2)
            stack.services["w1"].kill(signal.SIGKILL)
            stack.restart_worker("w1")
        return time.monotonic()

    report = drill(stack, "kill -9 worker", 6 * SCALE, kills)
    assert report["finished"] == report["requested"], report["errors"]


def test_reserved_matches_of_a_killed_worker_are_played_within_a_lease(stack: Stack) -> None:
    """Matches a worker took but never started (a retry's countdown) are not stranded
    for the queued grace (600 s here) when it is killed: the janitor resends them."""
    count = 4

    def kill_holder(ids: list[int]) -> float:
        # Only w1 consumes; it holds every message, none claimed (their countdown runs).
        wait_until(lambda: stack.broker_backlog().get("unacked", 0) >= count, 60,
                   "w1 holds the messages", poll_s=0.5)  # fmt: skip
        stack.services["w1"].kill(signal.SIGKILL)
        stack.restart_worker("w1")
        stack.restart_worker("w2")
        return time.monotonic()

    stack.services["w2"].stop()
    report = drill(stack, "kill -9 worker holding reserved matches", count, kill_holder,
                   countdown=120, settle_s=90)  # fmt: skip
    assert report["finished"] == count, report["errors"]


def test_worker_cut_off_from_the_bots_rates_nobody(stack: Stack) -> None:
    """The worker's link to the bots drops mid-match: released, never rated."""

    def cut(ids: list[int]) -> float:
        wait_until(lambda: playing_on(stack, "w1"), 120, "w1 plays a match", poll_s=0.2)
        stack.net.cut("w1", "bots")
        time.sleep(8)  # past a decision's deadline and bank: every seat times out
        stack.net.heal("w1", "bots")
        return time.monotonic()

    drill(stack, "worker cut from bots", 6 * SCALE, cut)
    assert re.search(r"worker cut off from the bots", stack.services["w1"].log())


def test_worker_cut_off_from_redis_notices_within_seconds(stack: Stack) -> None:
    """A partition from the broker: the worker logs it and its health probe says so."""
    noticed: dict[str, float] = {}

    def cut(ids: list[int]) -> float:
        w1 = stack.services["w1"]
        before = len(re.findall(BROKER_LOST, w1.log()))
        stack.net.cut("w1", "data", port=REDIS_PORT)
        cut_at = time.monotonic()
        wait_until(lambda: len(re.findall(BROKER_LOST, w1.log())) > before, 60,
                   "w1 logs that it lost the broker", poll_s=0.5)  # fmt: skip
        noticed["log"] = time.monotonic() - cut_at
        probe = stack.in_node("w1", [sys.executable, "-m", "deploy.health", "worker",
                                     "--name", "w1", "--timeout", "3"])  # fmt: skip
        noticed["probe"] = time.monotonic() - cut_at
        assert probe.returncode == 1 and "broker unreachable" in probe.stderr, probe.stderr
        stack.net.heal("w1", "data", port=REDIS_PORT)
        return time.monotonic()

    drill(stack, "worker cut from Redis", 4 * SCALE, cut)
    # Seconds, not the ~50 s of the transport's defaults (socket timeouts, health checks).
    assert noticed["log"] < 20, noticed
    healthy = stack.in_node("w1", [sys.executable, "-m", "deploy.health", "worker",
                                   "--name", "w1", "--timeout", "5"])  # fmt: skip
    assert healthy.returncode == 0, healthy.stderr


BROKER_LOST = (
    r"broker unreachable from this worker|Connection to broker lost|dropping stale connection"
)


def _client(stack: Stack) -> dict[str, Any]:
    from tests.cluster.stack import GRPC_PORT, WEB_PORT

    done = stack.in_node("bots", [sys.executable, "-m", "tests.cluster.client",
                                  f"{stack.ip('web')}:{WEB_PORT}", f"{stack.ip('web')}:{GRPC_PORT}",
                                  stack.token])  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.mark.parametrize("persist", [False, pytest.param(True, marks=full_only)])
def test_redis_restarted(stack: Stack, persist: bool) -> None:
    """Redis killed mid-run: reads and authenticated calls keep answering while it is
    away; restarted (empty without persistence), every match is played."""
    answers: dict[str, Any] = {}

    def restart(ids: list[int]) -> float:
        wait_until(lambda: playing_on(stack, "w1") or playing_on(stack, "w2"), 120,
                   "a match is played", poll_s=0.2)  # fmt: skip
        stack.services["redis"].kill(signal.SIGKILL)
        answers.update(_client(stack))
        stack.start_redis(persist=persist)
        return time.monotonic()

    stack.services["redis"].stop()
    stack.start_redis(persist=persist)
    drill(stack, f"Redis restarted ({'persistent' if persist else 'empty'})", 4 * SCALE, restart)
    assert answers["rest_read"] == 200 and answers["page"] == 200, answers
    assert answers["grpc"] == "OK", answers


def test_engine_killed(stack: Stack) -> None:
    """An engine dies mid-run: games resume on the other; it is routed around until back."""

    def kill(ids: list[int]) -> float:
        wait_until(lambda: playing_on(stack, "w1") or playing_on(stack, "w2"), 120,
                   "a match is played", poll_s=0.2)  # fmt: skip
        stack.services["eng1"].kill(signal.SIGKILL)
        time.sleep(5)
        stack.services["eng1"].start()
        stack.wait_port("eng1")
        return time.monotonic()

    report = drill(stack, "engine killed", 4 * SCALE, kill)
    assert report["finished"] == report["requested"], report["errors"]


@full_only
def test_worker_cut_off_from_postgres(stack: Stack) -> None:
    def cut(ids: list[int]) -> float:
        wait_until(lambda: playing_on(stack, "w1"), 120, "w1 plays a match", poll_s=0.2)
        stack.net.cut("w1", "data", port=PG_PORT)
        time.sleep(15)
        stack.net.heal("w1", "data", port=PG_PORT)
        return time.monotonic()

    drill(stack, "worker cut from PostgreSQL", 8 * SCALE, cut)


@full_only
def test_worker_cut_off_from_the_engines(stack: Stack) -> None:
    def cut(ids: list[int]) -> float:
        wait_until(lambda: playing_on(stack, "w1"), 120, "w1 plays a match", poll_s=0.2)
        stack.net.cut("w1", "eng1", "eng2")
        time.sleep(20)
        stack.net.heal("w1", "eng1", "eng2")
        return time.monotonic()

    drill(stack, "worker cut from engines", 8 * SCALE, cut)


@full_only
def test_postgres_restarted(stack: Stack) -> None:
    def restart(ids: list[int]) -> float:
        wait_until(lambda: playing_on(stack, "w1") or playing_on(stack, "w2"), 120,
                   "a match is played", poll_s=0.2)  # fmt: skip
        stack.services["postgres"].kill(signal.SIGKILL)
        time.sleep(3)
        stack.start_postgres()
        return time.monotonic()

    drill(stack, "PostgreSQL restarted", 8 * SCALE, restart)


@full_only
def test_packet_loss_on_every_link(stack: Stack) -> None:
    def lossy(ids: list[int]) -> float:
        stack.net.lossy(True)
        deadline = time.monotonic() + 90  # lossy for at most 90 s, however far play got
        while time.monotonic() < deadline and not stack.settled(ids[: len(ids) // 2]):
            time.sleep(1)
        stack.net.lossy(False)
        return time.monotonic()

    before = stack.net.dropped()
    drill(stack, "packet loss on every link", 8 * SCALE, lossy)
    assert stack.net.dropped() > before  # the links did lose packets


HANDSHAKE_FAILED = re.compile(r"handshake failed: (DEADLINE_EXCEEDED|UNAVAILABLE)")
GAME_OF = re.compile(r"match (\d+): game ")


def _wait_log(service: Any, pattern: re.Pattern[str], after: int, what: str,
              poll_s: float) -> re.Match[str]:  # fmt: skip
    """The first match of ``pattern`` in the service's log past offset ``after``, waited for."""
    found: list[re.Match[str]] = []

    def seen() -> bool:
        hit = pattern.search(service.log(), after)
        if hit is not None:
            found.append(hit)
        return hit is not None

    wait_until(seen, 180, f"{service.name} {what}", poll_s=poll_s)
    return found[0]


def test_heal_right_after_failed_handshakes_charges_nobody(stack: Stack) -> None:
    """The worker's handshakes fail inside a cut from the
    bots, and the network comes back right then, before the game. The game must not use
    the connections that failed (stuck in their connect or their reconnect backoff, they
    fail or time out the first decisions after the heal, and the referee, probing after
    the heal, charges the bots): each seat's failed channel is replaced by a fresh one."""
    w1 = stack.services["w1"]
    rounds = 3 * SCALE

    def cut_and_heal_at_the_handshake(ids: list[int]) -> float:
        for _ in range(rounds):
            start = len(w1.log())
            stack.net.cut("w1", "bots")
            try:
                failed = _wait_log(w1, HANDSHAKE_FAILED, start, "handshakes fail in the cut", 0.05)
            finally:
                stack.net.heal("w1", "bots")
            # The match whose handshakes failed is played on the healed network (or
            # released) before the next cut.
            game = _wait_log(w1, GAME_OF, failed.end(), "creates the game", 0.1)
            ended = re.compile(rf"match {game.group(1)} (finished|released|errored)")
            _wait_log(w1, ended, game.end(), "ends the match it began in the cut", 0.2)
        return time.monotonic()

    stack.services["w2"].stop()
    try:
        drill(stack, "heal right after failed handshakes", 2 * rounds,
              cut_and_heal_at_the_handshake)  # fmt: skip
    finally:
        stack.restart_worker("w2")


def test_a_match_no_seat_can_play_is_errored_unrated(stack: Stack) -> None:
    """Every bot process of the bots' machine dead. Forfeiting the
    seats one by one in seat order handed the last seat a win with no decision (rated);
    now no seat played, so the match is errored and no rating moves."""
    bots = [f"bot{i}" for i in range(len(BOT_PORTS))]
    for name in bots:
        stack.services[name].kill(signal.SIGKILL)
    try:
        report = drill(stack, "every bot dead", 3 * SCALE)
    finally:
        for name in bots:
            stack.services[name].start()
        for name in bots:
            stack.wait_port(name)
    assert report["errored"] == report["requested"], report
    assert all("no seat could play" in error for _, error in report["errors"]), report["errors"]


# In the full set only: each cut rightly releases w1's match, and w1 then stays away for
# LADDER_WORKER_OWN_FAULT_COOLDOWN_S (20 s) with w2 stopped, so a round costs 24 s or more.
# Why a round twice waited past 120 s in the bounded set on a loaded machine is not
# proven; its timeout names the matches.
@full_only
def test_a_cut_healed_just_before_the_deadline_charges_nobody(stack: Stack) -> None:
    """Found again by the nemesis: a cut between the worker and the
    bots shorter than a decision's deadline and bank (1 + 2 s here). The answer sent
    after the heal comes late (TCP's retransmission timer), the decision times out just
    after the heal, and a probe then finds the bot: evidence from after the fault. The
    link is watched while the answer is late, so the cut is seen when it happens."""
    rounds = 3 * SCALE

    def short_cuts(ids: list[int]) -> float:
        for _ in range(rounds):
            # Matches that went fast may all be played before the last round: then
            # there is nothing left to cut under.
            try:
                wait_until(lambda: playing_on(stack, "w1") or stack.settled(ids), 120,
                           "w1 plays a match", poll_s=0.2)  # fmt: skip
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{stack.diagnosis(ids)}") from None
            if stack.settled(ids):
                break
            time.sleep(0.3)
            stack.net.cut("w1", "bots")
            time.sleep(2.5)
            stack.net.heal("w1", "bots")
            time.sleep(3)
        return time.monotonic()

    stack.services["w2"].stop()
    try:
        drill(stack, "cut healed just before the deadline", 2 * rounds, short_cuts)
    finally:
        stack.restart_worker("w2")
