"""A worker's claim on a match: claim it, renew its lease, give it back, fail it; cancel.

Every write a worker makes while holding a claim is fenced by that claim (worker
name and attempt number), so a worker whose lease expired and was taken over can
no longer change the match. Staff (or the system) cancel a match here too.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from ladder.accounts.models import User
from ladder.common.exceptions import Conflict, NotFound, PermissionDenied
from ladder.matches.creation import OPEN_STATES
from ladder.matches.models import Match
from ladder.matches.tournament_tallies import tournament_tallies_errored


def match_start(
    *, match_id: int, worker: str, lease_seconds: float = 600, max_attempts: int | None = None
) -> Match:
    """Claim a queued match (or one whose lease expired) for a worker.

    The claim is conditional (the row is locked and its state checked), so a
    second delivery of the same match finds it taken (Conflict). With
    ``max_attempts``, a match already claimed that many times is errored
    instead of claimed again (Conflict too): a match that kills its worker
    every time must not loop forever (each redelivery would kill the next worker).
    """
    with transaction.atomic():
        match = Match.objects.select_for_update().filter(pk=match_id).first()
        if match is None:
            raise NotFound("no such match")
        now = timezone.now()
        expired = match.status == Match.Status.RUNNING and (
            match.lease_expires_at is None or match.lease_expires_at < now
        )
        if match.status != Match.Status.QUEUED and not expired:
            raise Conflict(f"match is {match.status}")
        exhausted = max_attempts is not None and match.attempts >= max_attempts
        if exhausted:
            # Written, then refused after the commit (raising inside would roll it back).
            match_mark_errored(
                match, f"gave up after {match.attempts} attempts; last: {match.error or '-'}"
            )
        else:
            match.status = Match.Status.RUNNING
            match.attempts += 1
            match.claimed_by = worker[:100]
            match.started_at = match.started_at or now
            match.lease_expires_at = now + timedelta(seconds=lease_seconds)
            match.save(
                update_fields=["status", "attempts", "claimed_by", "started_at", "lease_expires_at"]
            )
    if exhausted:
        raise Conflict(f"match is errored after {match.attempts} attempts")
    return match


def _held(match_id: int, worker: str, attempt: int) -> Any:
    """The match row, only while this claim (worker, attempt) still holds it."""
    return Match.objects.filter(
        pk=match_id, status=Match.Status.RUNNING, claimed_by=worker[:100], attempts=attempt
    )


def match_heartbeat(*, match_id: int, worker: str, attempt: int, lease_seconds: float) -> bool:
    """Renew a claim's lease; False when the claim is gone (taken over, cancelled, finished)."""
    expires = timezone.now() + timedelta(seconds=lease_seconds)
    return _held(match_id, worker, attempt).update(lease_expires_at=expires) == 1


@transaction.atomic
def match_release(*, match_id: int, worker: str, attempt: int, error: str) -> bool:
    """Give a claimed match back to the queue for a retry (no rating change, no result).

    The caller sends the retry message (Celery's retry, with backoff);
    ``enqueued_at`` is set so the janitor leaves it alone meanwhile. False
    when the claim is no longer this worker's (nothing changed).
    """
    released = _held(match_id, worker, attempt).update(
        status=Match.Status.QUEUED,
        claimed_by="",
        lease_expires_at=None,
        enqueued_at=timezone.now(),
        error=f"attempt {attempt}: {error}"[:10000],
    )
    return released == 1


def match_mark_errored(
    match: Match, error: str, *, counted: list[tuple[int, int]] | None = None
) -> None:
    """An open match (locked by the caller) turns errored; a tournament's counts it.

    ``counted``: the (tournament, bot) seats to count are added to it, for a caller
    that errors several matches in one transaction and counts them all at once in
    the counters' lock order (``tournament_tallies_errored``); else counted now.
    """
    if match.tournament_id is not None:
        seats = [(match.tournament_id, b) for b in match.seats.values_list("bot_id", flat=True)]
        if counted is None:
            tournament_tallies_errored(seats=seats)
        else:
            counted.extend(seats)
    match.status = Match.Status.ERRORED
    match.error = error[:10000]
    match.finished_at = timezone.now()
    match.lease_expires_at = None
    match.save(update_fields=["status", "error", "finished_at", "lease_expires_at"])


@transaction.atomic
def match_fail(
    *, match_id: int, error: str, worker: str | None = None, attempt: int | None = None
) -> Match:
    """Mark an open match errored (no rating change).

    A worker passes its claim (``worker``, ``attempt``): a match it no longer
    holds is not touched (Conflict).
    """
    match = Match.objects.select_for_update().filter(pk=match_id).first()
    if match is None:
        raise NotFound("no such match")
    if match.status not in OPEN_STATES:
        raise Conflict(f"match is {match.status}")
    if worker is not None and (match.claimed_by, match.attempts) != (worker[:100], attempt):
        raise Conflict("the match is no longer held by this worker")
    match_mark_errored(match, error)
    return match


@transaction.atomic
def match_cancel(*, match_id: int, user: User | None, reason: str = "") -> Match:
    """Cancel a queued or running match (staff, or the system with ``user=None``)."""
    if user is not None and not user.is_staff:
        raise PermissionDenied("only staff can cancel matches")
    match = Match.objects.select_for_update().filter(pk=match_id).first()
    if match is None:
        raise NotFound("no such match")
    if match.status == Match.Status.CANCELLED:
        return match
    if match.status not in OPEN_STATES:
        raise Conflict(f"match is {match.status}; only queued or running matches can be cancelled")
    match.status = Match.Status.CANCELLED
    match.error = (reason or "cancelled")[:10000]
    match.finished_at = timezone.now()
    match.lease_expires_at = None
    match.save(update_fields=["status", "error", "finished_at", "lease_expires_at"])
    return match
