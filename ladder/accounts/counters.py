"""Windowed limits that hold under concurrency: take a unit first, act only if it was given.

A limit checked by counting and then acted on (count < limit, then create) lets
every request that arrives before the first one finishes pass the check: ten
sign-ups from one address at the same instant made eight accounts under a limit
of five. Here a request *takes* a unit before it acts, by one conditional
``UPDATE ... SET count = count + 1 WHERE count < limit`` on a row of the
database (created first if missing, ``INSERT ... ON CONFLICT DO NOTHING``). The
row is locked by the update on PostgreSQL and the write lock serialises it on
SQLite, so at most ``limit`` requests are ever given a unit, in every process
(the database is the one store every process shares, whatever the cache is).
A request that took a unit and then failed gives it back (`give_back`).

Row-counted quotas (bots, open challenges, ...) are ``ladder.quotas``: they lock
the user's row and count, the rows they count being the units.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F

from ladder.accounts.models import LimitCounter
from ladder.common.ratelimit import parse_rate


@dataclass(frozen=True)
class Taken:
    """The answer of `WindowLimit.take`: whether a unit was given, in which window."""

    ok: bool
    window: int
    retry_after: int


@dataclass(frozen=True)
class WindowLimit:
    """At most ``limit`` units per key in aligned windows of ``period`` seconds."""

    name: str
    limit: int
    period: int

    @classmethod
    def from_rate(cls, name: str, rate: str | None) -> WindowLimit | None:
        """``'5/hour'`` -> a limit; empty, ``0`` or ``off`` -> None (no limit)."""
        parsed = parse_rate(rate)
        return None if parsed is None else cls(name, *parsed)

    def _key(self, who: str) -> str:
        digest = hashlib.sha256(who.encode("utf-8", "surrogatepass")).hexdigest()[:40]
        return f"{self.name[:80]}:{digest}"

    def _retry_after(self, now: float) -> int:
        return max(1, int(self.period - now % self.period + 0.999))

    def take(self, who: str) -> Taken:
        """Take one unit for ``who`` in the current window, atomically; ``ok`` False when
        the window's ``limit`` units are all taken (nothing is changed then)."""
        now = time.time()
        window = int(now // self.period)
        key = self._key(who)
        with transaction.atomic():
            # Rows of this limit's earlier windows are over (they only held counts): the
            # table keeps two windows per limit, however many addresses or users it saw.
            # The previous window is kept: a request that read the clock just before the
            # edge still takes its unit there, never from a row made anew at 0.
            LimitCounter.objects.filter(
                key__startswith=f"{self.name[:80]}:", window__lt=window - 1
            ).delete()
            LimitCounter.objects.bulk_create(
                [LimitCounter(key=key, window=window, count=0)], ignore_conflicts=True
            )
            given = LimitCounter.objects.filter(
                key=key, window=window, count__lt=self.limit
            ).update(count=F("count") + 1)
        return Taken(ok=given == 1, window=window, retry_after=self._retry_after(now))

    def give_back(self, who: str, taken: Taken) -> None:
        """Return a unit taken in ``taken.window`` (the request it was for failed)."""
        LimitCounter.objects.filter(key=self._key(who), window=taken.window, count__gt=0).update(
            count=F("count") - 1
        )

    def used(self, who: str) -> int:
        """Units taken by ``who`` in the current window (for pages that say how many)."""
        window = int(time.time() // self.period)
        row = LimitCounter.objects.filter(key=self._key(who), window=window).first()
        return row.count if row else 0

    def retry_after(self) -> int:
        return self._retry_after(time.time())
