"""The janitor's passes: matches whose worker was lost back in play, lost messages resent.

Safe to run any time and from anywhere: claiming is conditional
(``ladder.matches.claims.match_start``), so a message sent for a match that is
played meanwhile is a no-op.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from ladder.matches.claims import match_mark_errored
from ladder.matches.models import Match
from ladder.matches.queue import match_enqueue_on_commit
from ladder.matches.tournament_tallies import tournament_tallies_errored

log = logging.getLogger("ladder.matches")


@dataclass
class JanitorReport:
    """What one janitor pass did (match ids)."""

    requeued: list[int] = field(default_factory=list)  # lease expired: queued again
    resent: list[int] = field(default_factory=list)  # queued, message presumed lost
    errored: list[int] = field(default_factory=list)  # lease expired on the last attempt

    def __bool__(self) -> bool:
        return bool(self.requeued or self.resent or self.errored)


@transaction.atomic
def match_requeue_stale(
    *,
    queued_grace_s: float,
    max_attempts: int,
    now: datetime | None = None,
    limit: int = 1000,
) -> JanitorReport:
    """The janitor: put matches whose worker was lost back in play; resend lost messages.

    - running with an expired lease (its worker died or hung): queued again
      and re-sent, or errored when it already had ``max_attempts`` claims;
    - queued whose last message is older than ``queued_grace_s`` (a broker that
      restarted without persistence, a publish that failed): re-sent.

    Safe to run any time and from anywhere: claiming is conditional, so a
    message sent for a match that is played meanwhile is a no-op. At most
    ``limit`` matches of each kind per pass, oldest first.
    """
    now = now or timezone.now()
    report = JanitorReport()
    expired = Match.objects.filter(status=Match.Status.RUNNING, lease_expires_at__lt=now)
    errored_seats: list[tuple[int, int]] = []  # counted together: one lock order
    for match in expired.select_for_update().order_by("lease_expires_at", "pk")[:limit]:
        if match.attempts >= max_attempts:
            match_mark_errored(
                match,
                f"worker lost on attempt {match.attempts} of {max_attempts}",
                counted=errored_seats,
            )
            report.errored.append(match.pk)
            continue
        match.status = Match.Status.QUEUED
        match.error = f"attempt {match.attempts}: lease expired (worker lost)"
        match.claimed_by = ""
        match.lease_expires_at = None
        match.enqueued_at = now
        match.save(
            update_fields=["status", "error", "claimed_by", "lease_expires_at", "enqueued_at"]
        )
        report.requeued.append(match.pk)
    if errored_seats:
        tournament_tallies_errored(seats=errored_seats)
    stale = now - timedelta(seconds=queued_grace_s)
    lost = Match.objects.filter(status=Match.Status.QUEUED).filter(
        Q(enqueued_at__lt=stale) | Q(enqueued_at__isnull=True, created_at__lt=stale)
    )
    report.resent = list(lost.order_by("enqueued_at", "pk").values_list("pk", flat=True)[:limit])
    Match.objects.filter(pk__in=report.resent, status=Match.Status.QUEUED).update(enqueued_at=now)
    priorities = dict(
        Match.objects.filter(pk__in=report.requeued + report.resent).values_list("pk", "priority")
    )
    for match_id in report.requeued + report.resent:
        match_enqueue_on_commit(match_id, priorities.get(match_id, 0))
    if report:
        log.info(
            "janitor: requeued %s (lease expired), resent %s (message lost), errored %s",
            report.requeued, report.resent, report.errored,
        )  # fmt: skip
    return report


@transaction.atomic
def match_resend_queued(*, match_ids: Collection[int], now: datetime | None = None) -> list[int]:
    """Send again the messages of these matches, those still ``queued`` (the janitor's
    early pass: messages a dead worker had taken but never started). A message that
    turns up late anyway is a duplicate, skipped by the claim."""
    now = now or timezone.now()
    queued = Match.objects.select_for_update().filter(pk__in=match_ids, status=Match.Status.QUEUED)
    resent = dict(queued.order_by("pk").values_list("pk", "priority"))
    Match.objects.filter(pk__in=resent).update(enqueued_at=now)
    for match_id, priority in resent.items():
        match_enqueue_on_commit(match_id, priority)
    if resent:
        log.info("janitor: resent %s (taken by a worker that is gone)", list(resent))
    return list(resent)
