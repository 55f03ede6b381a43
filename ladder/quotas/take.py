"""Taking a quota: check and count as one step, under a lock on the user's row.

A quota checked by counting and then acted on lets every request that arrives
before the first one commits pass the count. So ``quota_take`` locks the user's
row (``SELECT ... FOR UPDATE`` on PostgreSQL; SQLite's ``BEGIN IMMEDIATE``
transactions admit one writer at a time) before it counts, and the caller creates
its rows in the same transaction: the next request of that user counts them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.utils import timezone

from ladder.quotas.catalogue import Quota

DAY = timedelta(days=1)


def quota_exempt(user: AbstractUser | None) -> bool:
    """Staff, and the system itself (no user), are never refused."""
    return user is None or bool(user.is_staff)


def quota_lock(user: AbstractUser) -> None:
    """Serialise a user's quota-counted writes (call inside the transaction)."""
    users = get_user_model()._default_manager.select_for_update()
    users.filter(pk=user.pk).values_list("pk", flat=True).first()


def quota_take(
    user: AbstractUser | None,
    counts: Callable[[datetime], Mapping[Quota, int]],
    *,
    adding: int = 1,
    locked: bool = False,
) -> None:
    """Refuse (``Quota.refuse``) the first quota ``adding`` more units would pass.

    ``counts(since)`` counts what the user holds of each quota, rows made at or
    after ``since`` (24 hours ago) for the daily ones; it runs after the lock on
    the user's row (call inside the transaction that then creates the units), or
    under the caller's own lock when ``locked`` (a row that serialises the same
    counts, e.g. the bot whose versions are counted). Staff are exempt: nothing is
    counted or locked for them.
    """
    if quota_exempt(user):
        return
    assert user is not None
    if not locked:
        quota_lock(user)
    for quota, used in counts(timezone.now() - DAY).items():
        if not quota.allows(used=used, adding=adding):
            quota.refuse(used=used)
