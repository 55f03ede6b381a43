"""Celery's own settings, derived from the workers' and the matchmaker's (docs/workers.md)."""

from __future__ import annotations

import os
from typing import Any

from ladder.settings.competitions import LADDER_COMPETITION_TICK_S, LADDER_TASK_COMPETITIONS_TICK
from ladder.settings.core import VAR_DIR
from ladder.settings.matchmaking import LADDER_MATCHMAKER_INTERVAL_S, LADDER_MATCHMAKER_TARGET
from ladder.settings.notifications import LADDER_NOTIFY_SWEEP_S, LADDER_TASK_NOTIFY_SWEEP
from ladder.settings.workers import (
    LADDER_BROKER_DIR,
    LADDER_JANITOR_INTERVAL_S,
    LADDER_MATCH_HARD_LIMIT_S,
    LADDER_MATCH_QUEUE,
    LADDER_TASK_JANITOR,
    LADDER_TASK_MATCHMAKE,
    LADDER_TASK_PLAY_MATCH,
    LADDER_TASK_SMOKE_VERSION,
    celery_broker,
)

CELERY_BROKER_URL, CELERY_BROKER_TRANSPORT, CELERY_BROKER_TRANSPORT_OPTIONS = celery_broker(
    os.environ, LADDER_BROKER_DIR, LADDER_MATCH_HARD_LIMIT_S
)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_IGNORE_RESULT = True  # the match row is the result; no result backend
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Take a message only when a pool process is free (Redis): a worker killed with
# kill -9 holds no matches it never started, whose messages would sit unacknowledged
# until the visibility timeout (ignored, with a warning, by the embedded broker).
CELERY_WORKER_DISABLE_PREFETCH = CELERY_BROKER_TRANSPORT is None  # i.e. Redis
# A publish while the broker is away fails fast: the request still answers (the match
# is stored queued; the janitor sends it again), it does not hang on retries.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1, "interval_start": 0, "interval_step": 0.5, "interval_max": 0.5,
}  # fmt: skip
CELERY_BROKER_CONNECTION_TIMEOUT = 3
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
# KiB; a backstop against slow leaks in long-lived children.
CELERY_WORKER_MAX_MEMORY_PER_CHILD = 512 * 1024
CELERY_TASK_DEFAULT_QUEUE = "ladder"
CELERY_TASK_QUEUES: dict[str, dict[str, Any]] = {LADDER_MATCH_QUEUE: {}, "ladder": {}}
# Smoke matches are matches too: they need a worker that can start the sandbox.
CELERY_TASK_ROUTES = {
    LADDER_TASK_PLAY_MATCH: {"queue": LADDER_MATCH_QUEUE},
    LADDER_TASK_SMOKE_VERSION: {"queue": LADDER_MATCH_QUEUE},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    "janitor": {
        "task": LADDER_TASK_JANITOR,
        "schedule": LADDER_JANITOR_INTERVAL_S,
        # A janitor message that waited a whole interval is superseded by the next one.
        "options": {"expires": LADDER_JANITOR_INTERVAL_S},
    },
}
CELERY_BEAT_SCHEDULE["notify-sweep"] = {
    "task": LADDER_TASK_NOTIFY_SWEEP,
    "schedule": LADDER_NOTIFY_SWEEP_S,
    "options": {"expires": LADDER_NOTIFY_SWEEP_S},
}
CELERY_BEAT_SCHEDULE["competitions"] = {
    "task": LADDER_TASK_COMPETITIONS_TICK,
    "schedule": LADDER_COMPETITION_TICK_S,
    # A tick that waited a whole interval is superseded by the next one.
    "options": {"expires": LADDER_COMPETITION_TICK_S},
}
if LADDER_MATCHMAKER_TARGET > 0:
    CELERY_BEAT_SCHEDULE["matchmake"] = {
        "task": LADDER_TASK_MATCHMAKE,
        "schedule": LADDER_MATCHMAKER_INTERVAL_S,
        # A tick that waited a whole interval is superseded by the next one.
        "options": {"expires": LADDER_MATCHMAKER_INTERVAL_S},
    }
