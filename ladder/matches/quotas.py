"""Challenge quotas: open challenges at once, and challenges in the last 24 hours.

A challenge is a match a user asked for (``requested_by``, not a tournament's);
a duplicate deal counts one per match it queues (one per seat rotation).
Checked by ``_matches_create`` under a lock on the user's row.
"""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Count, Q
from django.utils import timezone

from ladder.accounts.models import User
from ladder.accounts.quotas import quota_check, quota_exempt, quota_lock
from ladder.matches.models import Match

OPEN = (Match.Status.QUEUED, Match.Status.RUNNING)


def challenges_quota_check(user: User, adding: int) -> None:
    if quota_exempt(user):
        return
    quota_lock(user)
    since = timezone.now() - timedelta(days=1)
    counts = Match.objects.filter(requested_by=user, tournament__isnull=True).aggregate(
        open=Count("pk", filter=Q(status__in=OPEN)),
        today=Count("pk", filter=Q(created_at__gte=since)),
    )  # one query for both
    quota_check(
        user,
        "LADDER_QUOTA_OPEN_CHALLENGES",
        used=counts["open"],
        adding=adding,
        what="open challenges (queued or running)",
    )
    quota_check(
        user,
        "LADDER_QUOTA_CHALLENGES_PER_DAY",
        used=counts["today"],
        adding=adding,
        what="challenges",
        daily=True,
    )
