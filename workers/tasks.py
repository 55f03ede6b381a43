"""The workers' Celery tasks: play one match, and the janitor. Thin: the work is elsewhere.

``play_match`` is what ``ladder.matches.queue.match_enqueue`` sends (by name)
for every match created, released for a retry, or requeued by the janitor;
``janitor`` runs on beat (and as ``manage.py janitor``). Delivery settings and
limits: ``ladder/settings.py`` and docs/workers.md.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from typing import Any

from celery import Task
from celery.signals import worker_process_shutdown
from celery.utils.time import get_exponential_backoff_interval
from django.conf import settings

from ladder.matches.services import match_requeue_stale
from workers.celery_app import app
from workers.queued_match import play_queued_match, shutdown

log = logging.getLogger("workers.tasks")


def retry_delay(attempt: int) -> int:
    """Seconds before retry number ``attempt``: exponential from the backoff, jittered."""
    return int(
        get_exponential_backoff_interval(
            factor=max(1, round(settings.LADDER_MATCH_RETRY_BACKOFF_S)),
            retries=max(0, attempt - 1),
            maximum=max(1, round(settings.LADDER_QUEUED_GRACE_S / 2)),
            full_jitter=True,
        )
    )


@app.task(
    bind=True,
    name=settings.LADDER_TASK_PLAY_MATCH,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.LADDER_MATCH_SOFT_LIMIT_S,
    time_limit=settings.LADDER_MATCH_HARD_LIMIT_S,
    max_retries=settings.LADDER_MATCH_MAX_ATTEMPTS,
)
def play_match(self: Task, match_id: int) -> str:
    """Play one queued match exactly once (workers/queued_match.py); retry it if released.

    The match's log line says everything; the return value (which Celery logs
    too) is only the outcome.
    """
    report = play_queued_match(int(match_id))
    log.info("%s", report.line())
    if report.status == "released":
        raise self.retry(countdown=retry_delay(report.attempt))
    return report.status


@app.task(name=settings.LADDER_TASK_JANITOR, soft_time_limit=60, time_limit=90)
def janitor() -> dict[str, list[int]]:
    """Requeue matches whose lease expired and resend queued ones whose message was lost."""
    report = match_requeue_stale(
        queued_grace_s=settings.LADDER_QUEUED_GRACE_S,
        max_attempts=settings.LADDER_MATCH_MAX_ATTEMPTS,
    )
    return asdict(report)


@worker_process_shutdown.connect
def _close_engines(**_: Any) -> None:
    """A pool process that exits closes its channels and stops the engine it started."""
    shutdown()
