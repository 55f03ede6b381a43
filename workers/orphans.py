"""Matches whose message a dead worker took: found within about a lease, not the grace.

A worker acknowledges a match's message only when the match is done (late acks),
so the messages a worker holds without having claimed their match yet - a retry
waiting for its countdown, one taken the moment before it died - sit in Redis's
``unacked`` set. When that worker is killed nothing claims those matches (they
stay ``queued``, with no lease to expire), and Redis hands the messages out again
only after the visibility timeout (twice the hard time limit). The janitor's
queued grace would resend them after ``LADDER_QUEUED_GRACE_S`` (ten minutes).

This finds them early, by evidence from the broker: a queued match whose message
is older than ``LADDER_MATCH_LEASE_S``, which is in ``unacked`` (a worker took it),
and which no live worker reports holding (Celery's ``inspect``: active, reserved,
scheduled). Its stale entry is removed from ``unacked`` (so it is not delivered a
second time an hour later) and the match is sent again. Anything late or wrong
here costs a duplicate message at most, which the claim skips.
"""

from __future__ import annotations

import base64
import json
import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from ladder.matches.models import Match
from ladder.matches.services import match_resend_queued
from workers.celery_app import app

log = logging.getLogger("workers.orphans")
INSPECT_TIMEOUT_S = 1.0


def _match_id(message: dict[str, Any]) -> int | None:
    """The match id of a play-match message as kombu stores it, else None."""
    headers = message.get("headers") or {}
    if headers.get("task") != settings.LADDER_TASK_PLAY_MATCH:
        return None
    body = message.get("body", "")
    if (message.get("properties") or {}).get("body_encoding") == "base64":
        body = base64.b64decode(body)
    try:
        args = json.loads(body)[0]
        return int(args[0])
    except (ValueError, TypeError, IndexError, KeyError):
        return None


def held_by_live_workers() -> set[int] | None:
    """Match ids that live workers report holding; None when nobody answered."""
    inspect = app.control.inspect(timeout=INSPECT_TIMEOUT_S)
    held: set[int] = set()
    answered = False
    for kind in ("active", "reserved", "scheduled"):
        replies = getattr(inspect, kind)() or {}
        answered = answered or bool(replies)
        for requests in replies.values():
            for request in requests:
                request = request.get("request", request)  # scheduled entries wrap it
                if request.get("name") == settings.LADDER_TASK_PLAY_MATCH:
                    try:
                        held.add(int(request.get("args", [None])[0]))
                    except (TypeError, ValueError, IndexError):
                        continue
    return held if answered else None


def resend_orphaned() -> list[int]:
    """The janitor's early pass (Redis only): resend matches a dead worker had taken."""
    if settings.CELERY_BROKER_TRANSPORT is not None:  # the embedded broker has no acks
        return []
    stale = timezone.now() - timedelta(seconds=settings.LADDER_MATCH_LEASE_S)
    queued = set(
        Match.objects.filter(status=Match.Status.QUEUED, enqueued_at__lt=stale).values_list(
            "pk", flat=True
        )
    )
    if not queued:
        return []
    with app.connection_for_write() as conn:
        channel: Any = conn.default_channel
        client, key, index = channel.client, channel.unacked_key, channel.unacked_index_key
        taken: dict[int, list[bytes]] = {}
        for tag, raw in client.hgetall(key).items():
            try:
                message = json.loads(raw)[0]
            except (ValueError, IndexError, TypeError):
                continue
            match_id = _match_id(message)
            if match_id in queued:
                taken.setdefault(match_id, []).append(tag)
        if not taken:
            return []
        held = held_by_live_workers()
        if held is None:
            # No worker answered: a broker blip, or all of them are busy or gone. The
            # queued grace still covers these; nothing is decided on no evidence.
            return []
        orphans = sorted(set(taken) - held)
        for match_id in orphans:
            for tag in taken[match_id]:
                client.hdel(key, tag)
                client.zrem(index, tag)
    resent = match_resend_queued(match_ids=orphans)
    if resent:
        log.warning("janitor: matches %s were taken by a worker that is gone: resent", resent)
    return resent
