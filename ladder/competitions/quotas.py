"""Private tournaments a day per user (``LADDER_QUOTA_PRIVATE_TOURNAMENTS_PER_DAY``).

A private tournament queues many matches above the ladder's priority, so one
user's string of them would take the workers from everyone. Counted under a
lock on the user's row (``ladder.accounts.quotas``); staff are exempt.
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from ladder.accounts.models import User
from ladder.accounts.quotas import quota_check, quota_exempt, quota_lock
from ladder.competitions.models import Competition


def private_tournaments_quota_check(user: User) -> None:
    if quota_exempt(user):
        return
    quota_lock(user)
    used = Competition.objects.filter(
        private=True, created_by=user, created_at__gte=timezone.now() - timedelta(days=1)
    ).count()
    quota_check(
        user,
        "LADDER_QUOTA_PRIVATE_TOURNAMENTS_PER_DAY",
        used=used,
        what="private tournaments",
        daily=True,
    )
