"""Celery workers play every queued match exactly once, also when workers and brokers die.

Real ``celery worker`` processes (prefork), a real engine and real remote
bots, on the test database (SQLite file or PostgreSQL, whichever the run
uses), on Redis (a server of the test's own) and on the embedded broker. The
drills are bounded (a dozen matches, ten kills) so CI stays fast; the
full-size versions are documented commands (docs/workers.md) and the bench.
"""

from __future__ import annotations

import os
import random
import signal
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.matches.queue import match_enqueue
from tests.support.processes import start_bot
from tests.support.workers import alive, children_of, wait_until
from tests.workers.cluster.conftest import Cluster, assert_each_finished_once

N_BOTS = 5  # rand0..3 and slow, all rated from the same start
# Bounded for CI; the full-size drill is the same test with bigger numbers (docs/workers.md).
DRILL_MATCHES = int(os.environ.get("WORKERS_DRILL_MATCHES", "12"))
DRILL_KILLS = int(os.environ.get("WORKERS_DRILL_KILLS", "10"))


def create_matches(
    cluster: Cluster, n: int, rng: random.Random, *, slow: bool = False, twice: bool = False
) -> list[int]:
    """``n`` matches of 2-4 remote bots (with the slow bot in each when ``slow``).

    ``twice``: each match's message is sent again right after the first, so two
    workers take the two deliveries at the same time.
    """
    names = [f"rand{i}" for i in range(4)]
    ids = []
    for _ in range(n):
        seated = rng.sample(names, rng.randint(1, 3) if slow else rng.randint(2, 4))
        if slow:
            seated.insert(rng.randrange(len(seated) + 1), "slow")
        match = match_create(bot_ids=[cluster.bots[s] for s in seated], seed=rng.randrange(2**31))
        if twice:
            match_enqueue(match_id=match.pk)
        ids.append(match.pk)
    return ids


def finished(ids: list[int]) -> bool:
    done = Match.objects.filter(pk__in=ids, status__in=["finished", "errored", "cancelled"])
    return done.count() == len(ids)


def test_queued_matches_are_played_once_each(make_cluster: Any, broker_kind: str) -> None:
    """20 matches, 2 worker processes, each message delivered twice at once: one result each."""
    cluster = make_cluster(broker_kind)
    cluster.start_worker()
    cluster.start_worker()
    ids = create_matches(cluster, 20, random.Random(20), twice=True)
    wait_until(lambda: finished(ids), 180, "20 matches finished")
    assert_each_finished_once(ids, N_BOTS)
    lines = cluster.match_lines()
    played = [line for line in lines if " finished attempt 1 " in line]
    assert len(played) == 20, "\n".join(lines)

    def skipped() -> list[str]:
        return [line for line in cluster.match_lines() if " skipped: " in line]

    wait_until(lambda: len(skipped()) >= 20, 30, "every duplicate delivery consumed")
    assert len(skipped()) == 20, "\n".join(cluster.match_lines())
    # Both workers played: the queue is shared.
    workers = {m.claimed_by for m in Match.objects.filter(pk__in=ids)}
    assert len(workers) == 2, workers


def test_worker_children_killed_mid_match(make_cluster: Any) -> None:
    """kill -9 of a pool child while it plays, at random points, ten times: still once each."""
    cluster = make_cluster("redis")
    worker = cluster.start_worker(concurrency=2, beat=True)
    rng = random.Random(7)
    ids = create_matches(cluster, DRILL_MATCHES, rng, slow=True)
    killed: dict[int, int] = {}  # match id -> pid killed while playing it
    deadline = time.monotonic() + 15 * DRILL_MATCHES
    while len(killed) < DRILL_KILLS and time.monotonic() < deadline and not finished(ids):
        playing = list(
            Match.objects.filter(pk__in=ids, status="running", attempts=1)
            .exclude(pk__in=killed)
            .values_list("pk", "claimed_by")
        )
        if not playing:
            time.sleep(0.05)
            continue
        match_id, claimed_by = rng.choice(playing)
        pid = int(claimed_by.rsplit(":", 1)[1])
        assert pid in worker.children(), (pid, worker.children())  # only our own processes
        time.sleep(rng.uniform(0.0, 0.25))  # a random point of the match
        if Match.objects.filter(pk=match_id, status="running", claimed_by=claimed_by).exists():
            os.kill(pid, signal.SIGKILL)
            killed[match_id] = pid
    assert len(killed) >= DRILL_KILLS, f"only {len(killed)} kills mid-match"
    wait_until(lambda: finished(ids), 20 * DRILL_MATCHES, "every match finished after the kills")
    assert_each_finished_once(ids, N_BOTS)
    for match_id in killed:
        assert Match.objects.get(pk=match_id).attempts >= 2  # played again after the kill
    assert "lease expired" in cluster.logs() or "requeued" in cluster.logs()


def test_redis_restart_loses_no_match(make_cluster: Any) -> None:
    """Redis killed mid-run (its queue is lost) and restarted: the janitor resends, none doubled."""
    cluster = make_cluster("redis")
    cluster.start_worker(concurrency=2, beat=True)
    rng = random.Random(11)
    ids = create_matches(cluster, DRILL_MATCHES - 2, rng, slow=True)
    wait_until(
        lambda: Match.objects.filter(pk__in=ids, status="finished").count() >= 2,
        120,
        "a first few matches played",
    )
    assert cluster.redis is not None
    cluster.redis.kill()  # every queued message is gone with it
    ids += create_matches(cluster, 2, rng)  # enqueued while Redis is down: the send fails
    time.sleep(1.0)
    cluster.redis.start()
    wait_until(lambda: finished(ids), 20 * DRILL_MATCHES, "every match finished after the restart")
    assert_each_finished_once(ids, N_BOTS)
    assert "resent" in cluster.logs()


@pytest.mark.vendor_neutral
def test_overrun_is_stopped_and_nothing_is_left_behind(make_cluster: Any) -> None:
    """A match past its wall-clock limit is errored; the worker's own engine dies with it."""
    from ladder.accounts.models import User
    from ladder.bots.services import bot_create

    cluster = make_cluster("embedded")
    slower = start_bot("slow_bot.py", cluster.tmp, "slower", "--sleep", "0.2")
    try:
        sloth = bot_create(
            owner=User.objects.get(), name="sloth", kind="remote", endpoint=slower.address
        )
        # No ENGINE_ADDRESS: the pool process starts (and owns) a local engine.
        worker = cluster.start_worker(ENGINE_ADDRESS="", LADDER_MATCH_WALL_S="1.5")
        slow = match_create(bot_ids=[sloth.pk, cluster.bots["rand0"]], seed=5)
        wait_until(lambda: finished([slow.pk]), 120, "the slow match ended")
    finally:
        slower.stop()
    slow.refresh_from_db()
    assert slow.status == "errored" and "wall-clock limit of 1.5 s" in slow.error, slow.error
    assert not slow.seats.filter(rating_after__isnull=False).exists()
    quick = match_create(bot_ids=[cluster.bots["rand1"], cluster.bots["rand2"]], seed=6)
    wait_until(lambda: finished([quick.pk]), 120, "a quick match after it")
    quick.refresh_from_db()
    assert quick.status == "finished", quick.error
    (child,) = worker.children()
    engines = children_of(child)
    assert len(engines) == 1, engines  # the local engine, a child of the pool process
    (engine_pid,) = engines
    (engine_dir,) = Path(tempfile.gettempdir()).glob(f"digdown-engine-{child}-*")
    os.kill(child, signal.SIGKILL)  # the owner dies without cleaning up...
    wait_until(lambda: not alive(engine_pid), 20, "the orphaned engine stopped itself")
    # ...the next local engine sweeps its folder...
    again = match_create(bot_ids=[cluster.bots["rand1"], cluster.bots["rand3"]], seed=7)
    wait_until(lambda: finished([again.pk]), 120, "a match on the replacement child")
    assert not engine_dir.exists()
    # ...and a warm shutdown leaves nothing running either.
    wait_until(lambda: len(worker.children()) == 1, 30, "the pool replaced its child")
    descendants = set(worker.children())
    for pid in list(descendants):
        descendants |= children_of(pid)
    assert worker.stop() == 0, worker.log()
    assert not [pid for pid in descendants if alive(pid)]


@pytest.mark.vendor_neutral
def test_janitor_command_resends_a_lost_message(make_cluster: Any, settings: Any) -> None:
    """A queued match whose message never reached the broker: ``manage.py janitor`` resends it."""
    from django.core.management import call_command

    cluster = make_cluster("embedded")
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        **settings.CELERY_BROKER_TRANSPORT_OPTIONS,
        "data_folder_out": str(cluster.tmp / "nowhere"),  # this message is lost
    }
    (cluster.tmp / "nowhere").mkdir()
    (lost,) = create_matches(cluster, 1, random.Random(3))
    # The message went where no worker reads (the broker's files say so), and the worker,
    # once it says it is ready, has nothing of it to play.
    assert list((cluster.tmp / "nowhere").iterdir()), "the play-match message was written"
    cluster.start_worker()
    assert Match.objects.get(pk=lost).status == "queued"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        **settings.CELERY_BROKER_TRANSPORT_OPTIONS,
        "data_folder_out": settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"],
    }
    call_command("janitor", "--grace", "0")
    wait_until(lambda: finished([lost]), 60, "the lost match played")
    assert_each_finished_once([lost], N_BOTS)


def test_two_deliveries_at_the_same_instant(make_cluster: Any, settings: Any) -> None:
    """The task's body for one match in two threads released together: one plays, one skips."""
    from django.db import connection

    from workers.queued_match import play_queued_match

    cluster = make_cluster("embedded")
    settings.ENGINE_ADDRESS = cluster.engine.address
    (match_id,) = create_matches(cluster, 1, random.Random(5))
    gate = threading.Barrier(2)
    reports: list[Any] = []

    def deliver(worker: str) -> None:
        try:
            gate.wait(10)
            reports.append(play_queued_match(match_id, worker=worker))
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver, args=(f"t{i}:0",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(r.status for r in reports) == ["finished", "skipped"], [r.line() for r in reports]
    (skipped,) = [r for r in reports if r.status == "skipped"]
    assert skipped.error in {"match is running", "match is finished"}
    assert_each_finished_once([match_id], N_BOTS)
