"""Per-user quotas: one check, one error, the limit named.

One user created 880 bots and stored 131 MiB of versions of one bot with no
refusal; only the request throttle slowed them. Every quota is a setting
(``LADDER_QUOTA_*``, docs/operations.md), 0 meaning unlimited; staff are exempt.
The counting is the caller's (each app counts its own rows, under a lock on the
user's row so two concurrent requests cannot both take the last unit).
"""

from __future__ import annotations

from django.conf import settings

from ladder.accounts.models import User
from ladder.common.exceptions import DailyQuotaExceeded, QuotaExceeded


def quota_limit(setting: str) -> int:
    """The configured value of quota ``setting`` (0: unlimited)."""
    return int(getattr(settings, setting))


def quota_exempt(user: User | None) -> bool:
    return user is None or bool(user.is_staff)


def quota_lock(user: User) -> None:
    """Serialise a user's quota-counted writes (call inside the transaction)."""
    User.objects.select_for_update().filter(pk=user.pk).values_list("pk", flat=True).first()


def quota_check(
    user: User | None, setting: str, *, used: int, adding: int = 1, what: str, daily: bool = False
) -> None:
    """Refuse (``QuotaExceeded``) when ``used + adding`` would pass the limit of ``setting``."""
    limit = quota_limit(setting)
    if quota_exempt(user) or limit <= 0 or used + adding <= limit:
        return
    error = DailyQuotaExceeded if daily else QuotaExceeded
    per = " in the last 24 hours" if daily else ""
    raise error(
        f"quota exceeded: {what} — at most {limit}{per}, you have {used} ({setting})",
        extra={"limit": setting, "allowed": limit, "used": used},
    )
