"""The delivery settings the workers rely on (docs/workers.md says why each one).

The visibility timeout above the hard limit (no second delivery of a match still
playing), prefetch 1 with late acks and a queue of its own (no match waits behind
a long one), reject on worker lost (a killed child's match is redelivered), the
runner's limit below the soft limit below the hard limit, JSON only, and no gRPC
channel at import (grpcio and fork do not mix). Checked on the live Celery apps,
not on the settings module's text.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from django.conf import settings

from ladder.common.tasks import producer
from ladder.settings import celery_broker
from tests.support.processes import ROOT, default_env
from workers.celery_app import app
from workers.tasks import janitor, play_match, retry_delay


def test_limits_nest() -> None:
    wall = settings.LADDER_MATCH_WALL_S
    budget = settings.LADDER_MATCH_MAX_DECISIONS * settings.LADDER_MATCH_DECISION_S
    assert wall >= budget + 4 * settings.LADDER_MATCH_BANK_S
    assert play_match.soft_time_limit == settings.LADDER_MATCH_SOFT_LIMIT_S
    assert play_match.time_limit == settings.LADDER_MATCH_HARD_LIMIT_S
    # The runner stops first (and may still ask one bot with its whole bank, then
    # resume on another engine); Celery's limits are the backstop.
    slack = settings.LADDER_MATCH_DECISION_S + settings.LADDER_MATCH_BANK_S
    assert wall + slack + settings.LADDER_ENGINE_RESUME_S < play_match.soft_time_limit
    assert play_match.soft_time_limit < play_match.time_limit
    assert janitor.soft_time_limit < janitor.time_limit < settings.LADDER_MATCH_SOFT_LIMIT_S


def test_redis_visibility_timeout_exceeds_the_hard_limit(tmp_path: Path) -> None:
    url, transport, options = celery_broker(
        {"REDIS_URL": "redis://127.0.0.1:6379/0"}, tmp_path, settings.LADDER_MATCH_HARD_LIMIT_S
    )
    assert (url, transport) == ("redis://127.0.0.1:6379/0", None)
    assert options["visibility_timeout"] >= 2 * settings.LADDER_MATCH_HARD_LIMIT_S
    # CELERY_BROKER_URL wins over REDIS_URL.
    both = {"CELERY_BROKER_URL": "redis://a:1/2", "REDIS_URL": "redis://b:1/3"}
    assert celery_broker(both, tmp_path, 1)[0] == "redis://a:1/2"


def test_embedded_broker_without_configuration(tmp_path: Path) -> None:
    url, transport, options = celery_broker({}, tmp_path / "b", 1)
    assert url.startswith("filesystem://") and transport == "ladder.common.broker:Transport"
    assert Path(options["data_folder_in"]).is_dir()


def test_delivery_settings_on_both_apps() -> None:
    for celery in (app, producer()):
        conf = celery.conf
        assert conf.task_acks_late is True
        assert conf.task_reject_on_worker_lost is True
        assert conf.worker_prefetch_multiplier == 1
        assert conf.task_serializer == "json" and list(conf.accept_content) == ["json"]
        assert conf.task_ignore_result is True
        assert conf.worker_cancel_long_running_tasks_on_connection_loss is False
        route = conf.task_routes[settings.LADDER_TASK_PLAY_MATCH]
        assert route == {"queue": settings.LADDER_MATCH_QUEUE}
    assert settings.LADDER_MATCH_QUEUE in app.conf.task_queues
    assert play_match.name == settings.LADDER_TASK_PLAY_MATCH and play_match.acks_late


def test_retry_delays_stay_below_the_janitors_grace() -> None:
    delays = [retry_delay(attempt) for attempt in range(1, 10) for _ in range(20)]
    assert min(delays) >= 0 and max(delays) <= settings.LADDER_QUEUED_GRACE_S / 2
    assert settings.LADDER_JANITOR_INTERVAL_S < settings.LADDER_QUEUED_GRACE_S


def test_retries_wait_at_least_half_their_backoff() -> None:
    """A released match does not spend its attempts within seconds (on the outage that
    released it): each retry waits at least half its exponential delay (the bug: full
    jitter, down to 0 s, three attempts burned in 3 s)."""
    base = max(1, round(settings.LADDER_MATCH_RETRY_BACKOFF_S))
    for attempt in (1, 2, 3):
        delays = [retry_delay(attempt) for _ in range(200)]
        assert min(delays) >= int(base * 2 ** (attempt - 1) / 2), (attempt, min(delays))


def test_no_grpc_channel_is_created_at_import() -> None:
    """Importing the worker's app and tasks must not touch gRPC: they fork afterwards,
    and grpcio channels do not survive a fork."""
    code = (
        "import grpc\n"
        "def refuse(*a, **k): raise AssertionError('gRPC channel created at import')\n"
        "grpc.insecure_channel = grpc.secure_channel = refuse\n"
        "import workers.celery_app\n"
        "import django; django.setup()\n"
        "workers.celery_app.app.loader.import_default_modules()\n"
        "import workers.tasks, workers.queued_match, ladder.matches.queue\n"
        "import os; assert os.environ['GRPC_ENABLE_FORK_SUPPORT'] == 'false'\n"
    )
    env = {**default_env(), "DJANGO_SETTINGS_MODULE": "ladder.settings"}
    env.pop("GRPC_ENABLE_FORK_SUPPORT", None)
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr


def test_beat_runs_the_matchmaker_unless_its_target_is_zero() -> None:
    """On the live app: the matchmake task on beat at its interval, expiring with it;
    routed to the ladder's queue (not behind the matches); gone with a target of 0."""
    code = (
        "import json, workers.celery_app as c\n"
        "c.app.loader.import_default_modules()\n"
        "entry = c.app.conf.beat_schedule.get('matchmake')\n"
        "task = c.app.tasks['workers.matchmake']\n"
        "print(json.dumps([entry, c.app.amqp.router.route({}, task.name)['queue'].name]))\n"
    )
    outputs = []
    for target in ("3", "0"):
        env = {
            **default_env(),
            "DJANGO_SETTINGS_MODULE": "ladder.settings",
            "LADDER_MATCHMAKER_TARGET": target,
            "LADDER_MATCHMAKER_INTERVAL_S": "7",
        }
        run = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        outputs.append(json.loads(run.stdout.strip().splitlines()[-1]))
    (on, queue), (off, _) = outputs
    assert on == {"task": "workers.matchmake", "schedule": 7.0, "options": {"expires": 7.0}}
    assert queue == "ladder" and off is None
