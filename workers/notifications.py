"""The workers' notification tasks: send one delivery once, and the sweep of lost ones.

Thin: ``ladder.notifications.services`` does the work. ``notify`` is what
``ladder.notifications.services.notify`` sends (by name) on commit for each
delivery it created; a failure that may pass raises ``DeliveryFailed``, which
Celery retries with exponential backoff (``autoretry_for``, ``retry_backoff``:
``LADDER_NOTIFY_RETRY_BACKOFF_S`` doubled each retry, at most
``LADDER_NOTIFY_RETRY_MAX_S``, jittered unless ``LADDER_NOTIFY_RETRY_JITTER=0``).
The service counts the attempts in the row and fails it after the last one, so
the task's own retry limit is only a backstop. ``notify_sweep`` runs on beat.
"""

from __future__ import annotations

import logging

from django.conf import settings

from ladder.notifications.services import (
    DeliveryFailed,
    deliveries_resend_pending,
    delivery_send,
)
from workers.celery_app import app

log = logging.getLogger("workers.notifications")


@app.task(
    name=settings.LADDER_TASK_NOTIFY,
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=(DeliveryFailed,),
    retry_backoff=settings.LADDER_NOTIFY_RETRY_BACKOFF_S,
    retry_backoff_max=settings.LADDER_NOTIFY_RETRY_MAX_S,
    retry_jitter=settings.LADDER_NOTIFY_RETRY_JITTER,
    max_retries=settings.LADDER_NOTIFY_MAX_ATTEMPTS,
    soft_time_limit=3 * settings.LADDER_NOTIFY_TIMEOUT_S + 30,
    time_limit=3 * settings.LADDER_NOTIFY_TIMEOUT_S + 60,
)
def notify(delivery_id: int) -> str:
    """Send one delivery unless it was sent (exactly once: the row says so)."""
    return delivery_send(delivery_id=int(delivery_id))


@app.task(name=settings.LADDER_TASK_NOTIFY_SWEEP, soft_time_limit=60, time_limit=90)
def notify_sweep() -> list[int]:
    """Send again the messages of deliveries still owed after LADDER_QUEUED_GRACE_S."""
    return deliveries_resend_pending(grace_s=settings.LADDER_QUEUED_GRACE_S)
