"""Matches whose message a dead worker took: found within about a lease, not the grace.

A worker acknowledges a match's message only when the match is done (late acks),
so the messages a worker holds without having claimed their match yet - a retry
waiting for its countdown, one taken the moment before it died - sit in Redis's
``unacked`` set. When that worker is killed nothing claims those matches (they
stay ``queued``, with no lease to expire), and Redis hands the messages out again
only after the visibility timeout (twice the hard time limit). The janitor's
queued grace would resend them after ``LADDER_QUEUED_GRACE_S`` (ten minutes).

This finds them early, by evidence from the broker: a queued match whose message
is older than ``LADDER_MATCH_LEASE_S`` and which no live worker reports holding
(Celery's ``inspect``: active, reserved, scheduled) and no message waiting in the
queue carries - its message was taken by a worker that died, or lost with a Redis
that restarted empty - is sent again. Unacknowledged entries that no live worker
holds are removed (a worker that is gone will never acknowledge them, and Redis
would deliver them a second time an hour later). Anything late or wrong here
costs a duplicate message at most, which the claim skips.
"""

from __future__ import annotations

import base64
import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from ladder.matches.models import Match
from ladder.matches.retries import match_resend_queued
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
    kinds = ("active", "reserved", "scheduled")
    # At once: each broadcast waits its whole timeout for replies.
    with ThreadPoolExecutor(max_workers=len(kinds)) as pool:
        answers = list(pool.map(lambda kind: getattr(inspect, kind)() or {}, kinds))
    held: set[int] = set()
    answered = False
    for replies in answers:
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


def _unacked(client: Any, channel: Any) -> dict[int, list[bytes]]:
    """Match id -> delivery tags of its play-match messages a worker took and has not
    acknowledged, delivered longer than a lease ago."""
    ceiling = time.time() - settings.LADDER_MATCH_LEASE_S
    taken: dict[int, list[bytes]] = {}
    for tag, raw in client.hgetall(channel.unacked_key).items():
        delivered = client.zscore(channel.unacked_index_key, tag)
        if delivered is not None and delivered > ceiling:
            continue
        try:
            match_id = _match_id(json.loads(raw)[0])
        except (ValueError, IndexError, TypeError):
            continue
        if match_id is not None:
            taken.setdefault(match_id, []).append(tag)
    return taken


def _waiting(client: Any, channel: Any) -> set[int]:
    """Match ids whose messages wait in the matches queue (every priority step)."""
    found: set[int] = set()
    for priority in channel.priority_steps:
        key = channel._q_for_pri(settings.LADDER_MATCH_QUEUE, priority)
        for raw in client.lrange(key, 0, -1):
            try:
                match_id = _match_id(json.loads(raw))
            except (ValueError, TypeError):
                continue
            if match_id is not None:
                found.add(match_id)
    return found


def resend_orphaned() -> list[int]:
    """The janitor's early pass (Redis only): resend the queued matches whose message a
    dead worker had taken, or which no message carries any more (a Redis that restarted
    empty); drop the dead workers' stale unacknowledged entries. Returns the resent ids."""
    if settings.CELERY_BROKER_TRANSPORT is not None:  # the embedded broker has no acks
        return []
    stale = timezone.now() - timedelta(seconds=settings.LADDER_MATCH_LEASE_S)
    queued = set(
        Match.objects.filter(status=Match.Status.QUEUED, enqueued_at__lt=stale).values_list(
            "pk", flat=True
        )
    )
    with app.connection_for_write() as conn:
        channel: Any = conn.default_channel
        client = channel.client
        taken = _unacked(client, channel)
        # Matches whose message waits in the queue are fine however old: a backlog.
        unexplained = queued - _waiting(client, channel) if queued else set()
        if not taken and not unexplained:
            return []  # nothing to ask the workers about (the usual case: cheap)
        held = held_by_live_workers()
        if held is None:
            # No worker answered: a broker blip, or every worker busy or gone. Nothing is
            # decided without evidence; the queued grace still covers these matches.
            return []
        dead = set(taken) - held
        for match_id in dead:  # nobody alive will acknowledge these
            for tag in taken[match_id]:
                client.hdel(channel.unacked_key, tag)
                client.zrem(channel.unacked_index_key, tag)
        lost = unexplained - held
    resent = match_resend_queued(match_ids=sorted(lost))
    if resent or dead:
        log.warning(
            "janitor: resent %s (their message was taken by a worker that is gone, or lost); "
            "dropped the unacknowledged messages of matches %s",
            resent, sorted(dead),
        )  # fmt: skip
    return resent
