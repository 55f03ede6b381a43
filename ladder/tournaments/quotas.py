"""Comparison quotas: comparisons still being played at once, and comparisons per day.

A comparison queues 2 x deals x seats matches at a priority above the ladder's,
so a user who asks for many at once (or one after another all day) takes the
workers from everyone. Checked by ``comparison_create`` under a lock on the
user's row; staff are exempt. Tournaments need no quota of their own: only staff
create or start them (``ladder.tournaments.services._staff``).
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from ladder.accounts.models import User
from ladder.accounts.quotas import quota_check, quota_exempt, quota_lock
from ladder.matches.services import OPEN_STATES
from ladder.tournaments.models import VersionComparison


def comparisons_quota_check(user: User) -> None:
    if quota_exempt(user):
        return
    quota_lock(user)
    mine = VersionComparison.objects.filter(requested_by=user)
    open_ones = (
        mine.filter(deal_set__matches__status__in=OPEN_STATES).values("pk").distinct().count()
    )
    quota_check(
        user,
        "LADDER_COMPARISONS_OPEN_PER_USER",
        used=open_ones,
        what="comparisons still being played (wait for them)",
    )
    quota_check(
        user,
        "LADDER_QUOTA_COMPARISONS_PER_DAY",
        used=mine.filter(created_at__gte=timezone.now() - timedelta(days=1)).count(),
        what="comparisons",
        daily=True,
    )
