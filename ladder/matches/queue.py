"""The ladder's side of the match queue: hand a match to the workers as a Celery message.

The ladder never imports ``workers``: it names the task
(``settings.LADDER_TASK_PLAY_MATCH``) and sends a message that carries only
the match id, through a Celery app configured from the same Django settings
as the workers' app (``workers/celery_app.py``), so both agree on the broker,
the serializer and the route to the ``matches`` queue. Services call
``match_enqueue`` from ``transaction.on_commit``: a worker never receives the
id of a row it cannot see yet (pitfall C9).

A message that is lost (the broker restarted, the publish failed) costs only
time: the match stays ``queued`` and the janitor sends it again.

``HOSTED_REFUSED`` is the other half of the contract: what the workers cannot
play yet (hosted bots need the sandbox), said the same way on both sides.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import Celery
from django.conf import settings
from django.core.signals import setting_changed
from django.dispatch import receiver

log = logging.getLogger("ladder.matches.queue")

HOSTED_REFUSED = (
    "is a hosted bot; hosted bots become playable with the sandboxed workers "
    "(a later issue). Only remote bots can be played now."
)

_lock = threading.Lock()
_producer: Celery | None = None


def producer() -> Celery:
    """This process's Celery app for sending (created on first use, from Django settings)."""
    global _producer
    with _lock:
        if _producer is None:
            app = Celery("ladder", set_as_current=False)
            app.config_from_object("django.conf:settings", namespace="CELERY")
            _producer = app
        return _producer


@receiver(setting_changed)
def _forget_producer(*, setting: str, **_: Any) -> None:
    """Tests that override a CELERY_* setting get an app built from the new value."""
    global _producer
    if setting.startswith("CELERY_"):
        with _lock:
            _producer = None


def match_enqueue(*, match_id: int) -> None:
    """Send the play-match task for one match (to the ``matches`` queue, by the settings)."""
    producer().send_task(settings.LADDER_TASK_PLAY_MATCH, args=[match_id])
    log.info("match %d enqueued", match_id)
