"""Every per-user quota: the setting that is its limit, what it counts, over which period.

The apps that hold the counted rows name these when they take one
(``ladder.quotas.take.quota_take``); docs/operations.md lists the settings.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NoReturn

from django.conf import settings

from ladder.common.exceptions import DailyQuotaExceeded, QuotaExceeded


@dataclass(frozen=True)
class Quota:
    """At most ``limit`` (the value of ``setting``; 0: unlimited) of ``what`` per user;
    ``daily``: of those made in the last 24 hours (a refusal says trying later helps)."""

    setting: str
    what: str
    daily: bool = False

    @property
    def limit(self) -> int:
        return int(getattr(settings, self.setting))

    def about(self, what: str) -> Quota:
        """The same quota, its refusal naming ``what`` (e.g. which bot)."""
        return replace(self, what=what)

    def allows(self, *, used: int, adding: int = 1) -> bool:
        limit = self.limit
        return limit <= 0 or used + adding <= limit

    def refuse(self, *, used: int) -> NoReturn:
        """Raise the refusal: 403 (429 for a daily quota) / RESOURCE_EXHAUSTED, the limit named."""
        error = DailyQuotaExceeded if self.daily else QuotaExceeded
        per = " in the last 24 hours" if self.daily else ""
        raise error(
            f"quota exceeded: {self.what} — at most {self.limit}{per}, you have {used}"
            f" ({self.setting})",
            extra={"limit": self.setting, "allowed": self.limit, "used": used},
        )


# ladder.bots
BOTS_PER_USER = Quota("LADDER_QUOTA_BOTS_PER_USER", "bots per user")
VERSIONS_PER_BOT = Quota(
    "LADDER_QUOTA_VERSIONS_PER_BOT",
    "stored versions per bot (the others are current, pending or in open matches)",
)
BYTES_PER_USER = Quota(
    "LADDER_QUOTA_BYTES_PER_USER",
    "stored bytes of uploads per user (delete old bots or versions)",
)
CONNECTED_LABELS_PER_DAY = Quota(
    "LADDER_CONNECT_NEW_VERSIONS_PER_DAY", "new version labels of a connected bot", daily=True
)
# ladder.matches
OPEN_CHALLENGES = Quota("LADDER_QUOTA_OPEN_CHALLENGES", "open challenges (queued or running)")
CHALLENGES_PER_DAY = Quota("LADDER_QUOTA_CHALLENGES_PER_DAY", "challenges", daily=True)
# ladder.tournaments
OPEN_COMPARISONS = Quota(
    "LADDER_COMPARISONS_OPEN_PER_USER", "comparisons still being played (wait for them)"
)
COMPARISONS_PER_DAY = Quota("LADDER_QUOTA_COMPARISONS_PER_DAY", "comparisons", daily=True)
# ladder.competitions
PRIVATE_TOURNAMENTS_PER_DAY = Quota(
    "LADDER_QUOTA_PRIVATE_TOURNAMENTS_PER_DAY", "private tournaments", daily=True
)
