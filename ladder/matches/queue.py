"""The ladder's side of the match queue: hand a match to the workers as a Celery message.

Sent by name through ``ladder.common.tasks`` (the ladder never imports
``workers``), from ``transaction.on_commit``. A message that is lost costs only
time: the match stays ``queued`` and the janitor sends it again.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from ladder.common.tasks import task_send

log = logging.getLogger("ladder.matches.queue")


def match_enqueue(*, match_id: int, priority: int = 0) -> None:
    """Send the play-match task for one match (to the ``matches`` queue, by the settings).

    ``priority`` is the match's (``Match.priority``): 0, a ladder match, is sent
    at ``LADDER_PRIORITY_LADDER``; 1, a private tournament's, at ``LADDER_PRIORITY_PRIVATE``;
    above 1 (tournaments, competitions, version comparisons) at ``LADDER_PRIORITY_EVENTS``,
    which the Redis broker hands out first.
    """
    broker_priority = (
        settings.LADDER_PRIORITY_EVENTS
        if priority > 1
        else settings.LADDER_PRIORITY_PRIVATE
        if priority == 1  # a private tournament's (ladder.competitions): after public events
        else settings.LADDER_PRIORITY_LADDER
    )
    task_send(settings.LADDER_TASK_PLAY_MATCH, match_id, priority=broker_priority)
    log.info("match %d enqueued (priority %d)", match_id, broker_priority)


def match_enqueue_on_commit(match_id: int, priority: int = 0) -> None:
    """Send the match to the workers once the transaction that made it queued commits.

    ``robust``: a broker that is down must not undo or fail the write; the match
    stays queued and the janitor sends it again later.
    """

    def send() -> None:  # a named function: Django logs a robust callback's failure by name
        match_enqueue(match_id=match_id, priority=priority)

    transaction.on_commit(send, robust=True)
