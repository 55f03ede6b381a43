"""Send a task to the workers by name: the ladder's one door into the Celery queue.

The ladder never imports ``workers``: it names the task (``settings.LADDER_TASK_*``)
and sends a message that carries only ids, through a Celery app configured from
the same Django settings as the workers' app (``workers/celery_app.py``), so both
agree on the broker, the serializer and the routes. Services send from
``transaction.on_commit``: a worker never receives the id of a row it cannot see
yet (sent inside the transaction, it could arrive first). A message that is
lost (the broker restarted, the publish failed) costs only time: the janitor
sends it again.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from celery import Celery
from django.core.signals import setting_changed
from django.dispatch import receiver

log = logging.getLogger("ladder.tasks")

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


def task_send(name: str, *args: Any, priority: int | None = None) -> None:
    """Send task ``name`` with ``args`` (routed to its queue by ``CELERY_TASK_ROUTES``).

    ``priority`` is the broker's message priority (Redis: 0 is taken first, then 3,
    6, 9; the embedded broker ignores it); None sends the broker's default.
    """
    options = {} if priority is None else {"priority": priority}
    producer().send_task(name, args=list(args), **options)
    log.info("sent %s%s", name, tuple(args))


def queue_depth(queue: str, timeout_s: float = 1.0) -> int | None:
    """Messages waiting in broker queue ``queue`` (priority lists included); None when the
    broker does not answer within ``timeout_s`` (a scrape must not hang on it)."""
    try:
        with producer().connection_for_read() as conn:
            conn.ensure_connection(max_retries=1, timeout=timeout_s)
            declared = conn.default_channel.queue_declare(queue=queue, passive=True)
            return int(declared.message_count)
    except Exception as exc:  # any broker failure: no figure, never an error page
        log.debug("queue depth of %s not read: %s", queue, exc)
        return None
