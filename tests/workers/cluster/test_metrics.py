"""Operators' metrics move by exactly what was played: real workers, engine and bots, scraped
over HTTP while matches play, and after a worker is killed mid-match."""

from __future__ import annotations

import json
import os
import random
import signal
from contextlib import suppress
from typing import Any

from ladder.matches.models import Match
from tests.support.processes import start_engine
from tests.support.scrape import free_port, scrape, total
from tests.support.workers import alive, wait_until
from tests.workers.cluster.conftest import assert_each_finished_once
from tests.workers.cluster.test_workers import N_BOTS, create_matches, finished
from workers.runner import replay as replay_io


def bot_decisions(ids: list[int]) -> int:
    """Decisions the bots were asked for, read from the stored replays (forced plays excluded)."""
    asked = 0
    for match in Match.objects.filter(pk__in=ids):
        doc = replay_io.read(match.replay.path)
        asked += sum(1 for d in doc["decisions"] if not d.get("forced"))
    return asked


def test_counters_equal_the_matches_played(make_cluster: Any, tmp_path: Any) -> None:
    engine_port, w1_port, w2_port = free_port(), free_port(), free_port()
    engine = start_engine(tmp_path, "engine-metrics", "--metrics-port", str(engine_port))
    try:
        cluster = make_cluster("redis")
        for port in (w1_port, w2_port):
            cluster.start_worker(
                concurrency=2,
                LADDER_METRICS_PORT=str(port),
                ENGINE_ADDRESS=engine.address,
                LADDER_LOG_FORMAT="json",
            )
        ids = create_matches(cluster, 6, random.Random(6))
        wait_until(lambda: finished(ids), 180, "6 matches finished")
        assert_each_finished_once(ids, N_BOTS)

        workers = [scrape(f"http://127.0.0.1:{p}/metrics") for p in (w1_port, w2_port)]
        played = sum(total(w, "ladder_worker_matches_total", outcome="finished") for w in workers)
        assert played == 6, "every recorded match counted once, by the worker that recorded it"
        asked = bot_decisions(ids)
        decisions = sum(
            total(w, "ladder_worker_decision_seconds_count", seat_kind="remote") for w in workers
        )
        assert decisions == asked
        # Both pool processes of a worker are summed: the counts above came from 4 processes.
        assert sum(total(w, "ladder_worker_sandbox_mode") for w in workers) == 2

        # JSON logs: each delivery's line carries its match and worker as fields.
        lines = [json.loads(line) for line in cluster.logs().splitlines() if line.startswith("{")]
        reports = [line for line in lines if line.get("logger") == "workers.tasks"]
        assert len(reports) == 6, cluster.logs()[-3000:]
        for line in reports:
            assert line["message"].startswith(f"match {line['match_id']} ")
            assert line["worker"] and line["level"] == "INFO" and line["time"]

        eng = scrape(f"http://127.0.0.1:{engine_port}/metrics")
        assert total(eng, "engine_steps_total") == asked
        assert total(eng, "engine_games_created_total") == 6
        assert total(eng, "engine_games_open") <= 6  # closed games are forgotten
        # Each game is one Play stream (protocol 2), or a NewGame call where streams are off.
        games = sum(
            total(eng, "grpc_server_handled_total", grpc_method=method, grpc_code="OK")
            for method in ("NewGame", "Play")
        )
        assert games == 6
    finally:
        engine.stop()


def test_a_killed_workers_match_is_counted_once(make_cluster: Any) -> None:
    """The killed worker never recorded its match; the one that played it again (its lease
    expired: the janitor on beat requeued it) counts it, once."""
    port = free_port()
    cluster = make_cluster("redis")
    doomed = cluster.start_worker()
    ids = create_matches(cluster, 3, random.Random(3), slow=True)
    wait_until(
        lambda: Match.objects.filter(pk__in=ids, status="running").exists(), 60, "a match running"
    )
    pids = [doomed.proc.pid, *doomed.children()]
    for pid in pids:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not any(alive(p) for p in pids), 10, "the doomed worker gone")
    survivor = cluster.start_worker(beat=True, LADDER_METRICS_PORT=str(port))
    wait_until(lambda: finished(ids), 240, "3 matches finished after the kill")
    assert_each_finished_once(ids, N_BOTS)
    samples = scrape(f"http://127.0.0.1:{port}/metrics")
    assert total(samples, "ladder_worker_matches_total", outcome="finished") == 3
    assert survivor.proc.poll() is None
