"""The web's ``/metrics``: who may read it, what it shows, and exact counts across gunicorn's
worker processes (prometheus-client's multiprocess mode, ``ladder/gunicorn.conf.py``)."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from tests.support.processes import Proc, start_gunicorn
from tests.support.scrape import free_port, scrape, total
from tests.support.web_server import collect_static, production_env

pytestmark = pytest.mark.django_db(transaction=True)


def test_metrics_are_answered_to_allowed_networks_only(settings: Any) -> None:
    settings.LADDER_METRICS_ALLOW = "127.0.0.0/8,::1/128"
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="203.0.113.9").get("/metrics").status_code == 404
    # A forwarded address counts only behind trusted proxies: a public client that claims
    # to be loopback is still refused.
    spoof = Client(REMOTE_ADDR="203.0.113.9", HTTP_X_FORWARDED_FOR="127.0.0.1")
    assert spoof.get("/metrics").status_code == 404
    settings.LADDER_METRICS_ALLOW = "203.0.113.0/24"
    assert Client(REMOTE_ADDR="203.0.113.9").get("/metrics").status_code == 200


def test_metrics_show_the_ladder_state(settings: Any, tmp_path: Path) -> None:
    settings.MEDIA_ROOT = str(tmp_path)
    reply = Client(REMOTE_ADDR="127.0.0.1").get("/metrics")
    names = {f.name for f in text_string_to_metric_families(reply.content.decode())}
    for name in (
        "ladder_matches_queued",
        "ladder_matches_running",
        "ladder_oldest_queued_match_age_seconds",
        "ladder_matches_finished_last_hour",
        "ladder_matches_errored_last_hour",
        "ladder_workers_seen_last_hour",
        "ladder_broker_queue_messages",
        "ladder_media_disk_used_ratio",
    ):
        assert name in names, name


@pytest.fixture
def gunicorn(transactional_db: Any, tmp_path: Path, settings: Any) -> Iterator[tuple[Proc, int]]:
    port = free_port()
    env = production_env(
        media_root=settings.MEDIA_ROOT,
        static_root=collect_static(tmp_path / "static"),
        tmp=tmp_path,
        LADDER_METRICS_PORT=str(port),
        LADDER_THROTTLE_ANON="1/min",
        # Workers recycled every few requests: a process that exits keeps its counts in the
        # sums and takes nobody's files with it.
        GUNICORN_CMD_ARGS="--max-requests 4 --max-requests-jitter 0",
    )
    proc = start_gunicorn(env, tmp_path, workers=2, probe="/api/v1/ladders/")
    yield proc, port
    assert proc.stop(timeout_s=15) == 0, proc.log()[-3000:]


def test_counts_are_summed_over_gunicorns_processes(gunicorn: tuple[Proc, int]) -> None:
    """12 requests on new connections (both worker processes answer, and are recycled every
    4 requests; the anonymous throttle, 1/min per process, refuses most): each answer is
    counted once, and so is each refusal."""
    server, port = gunicorn
    url = f"http://127.0.0.1:{port}/metrics"
    name = "django_http_responses_total_by_status_view_method_total"
    before = scrape(url)
    n, refused = 12, 0
    for _ in range(n):
        try:
            with urllib.request.urlopen(f"http://{server.address}/api/v1/leaderboard/", timeout=10):
                pass
        except urllib.error.HTTPError as exc:
            assert exc.code == 429, exc
            refused += 1
    after = scrape(url)
    # Counted by view: the start-up probe (another page) may still be answered meanwhile.
    assert total(after, name, view="leaderboard") - total(before, name, view="leaderboard") == n
    assert total(after, name, view="leaderboard", status="429") == refused
    assert refused >= n // 2  # at most one answer in each worker's 4 requests got through
    assert total(after, "ladder_throttled_total", interface="rest") >= refused
    # The page reads the same files as the master's port.
    with urllib.request.urlopen(f"http://{server.address}/metrics", timeout=10) as reply:
        assert reply.status == 200
