"""Ladders: which matches are rated together.

A ladder is a ruleset and a difficulty with the seat counts it plays; each bot
has its own rating entry per ladder (``ratings.BotRating``) and each match is
played on one ladder or on none (then it is unrated). Ladders are
configuration, not data: ``settings.LADDER_LADDERS`` names them and
``settings.LADDER_DEFAULT_LADDER`` is the one used when a request names none,
so switching the default is one line and adding a ladder is one entry (then
``manage.py rerate --ladder KEY`` gives every existing bot its entry there).

Keys are stored on matches and rating entries, so a ladder's key never
changes once it has been used; removing a ladder from the settings hides its
leaderboard but keeps its history.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import models

from ladder.common.exceptions import NotFound

KEY_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,31}")
MIN_SEATS, MAX_SEATS = 2, 4


class Difficulty(models.TextChoices):
    EASY = "easy"
    NORMAL = "normal"
    HARD = "hard"
    HARDCORE = "hardcore"


@dataclass(frozen=True)
class Ladder:
    """One configured ladder."""

    key: str
    ruleset: str
    difficulty: str
    min_seats: int
    max_seats: int
    system: str = ""
    """The rating system of its first season (``ladder.ratings.systems``); empty: the
    ``LADDER_RATING_SYSTEM`` default. Later seasons keep the one ``rerate --system`` set."""

    def plays(self, seats: int) -> bool:
        return self.min_seats <= seats <= self.max_seats

    @property
    def is_default(self) -> bool:
        return self.key == settings.LADDER_DEFAULT_LADDER

    def describe(self) -> str:
        seats = f"{self.min_seats}-{self.max_seats} seats"
        return f"{self.key} ({self.ruleset}, {self.difficulty}, {seats})"


def _build(key: str, spec: Mapping[str, Any]) -> Ladder:
    try:
        low, high = spec["seats"]
        ladder = Ladder(
            key,
            str(spec["ruleset"]),
            str(spec["difficulty"]),
            int(low),
            int(high),
            str(spec.get("system") or settings.LADDER_RATING_SYSTEM),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ImproperlyConfigured(
            f"LADDER_LADDERS[{key!r}] needs ruleset, difficulty and seats (min, max)"
        ) from exc
    if not KEY_PATTERN.fullmatch(key) or not KEY_PATTERN.fullmatch(ladder.ruleset):
        raise ImproperlyConfigured(f"ladder key and ruleset must match {KEY_PATTERN.pattern}")
    if ladder.difficulty not in Difficulty.values:
        raise ImproperlyConfigured(
            f"ladder {key}: difficulty must be one of {', '.join(Difficulty.values)}"
        )
    if not MIN_SEATS <= ladder.min_seats <= ladder.max_seats <= MAX_SEATS:
        raise ImproperlyConfigured(f"ladder {key}: seats must be within {MIN_SEATS}-{MAX_SEATS}")
    return ladder


def ladders() -> dict[str, Ladder]:
    """Every configured ladder by key, checked (ImproperlyConfigured otherwise).

    Read from the settings on each call (a handful of entries), so overridden
    settings take effect at once.
    """
    built = {key: _build(key, spec) for key, spec in settings.LADDER_LADDERS.items()}
    if settings.LADDER_DEFAULT_LADDER not in built:
        raise ImproperlyConfigured(
            f"LADDER_DEFAULT_LADDER {settings.LADDER_DEFAULT_LADDER!r} is not in LADDER_LADDERS"
        )
    values = list(built.values())
    for i, a in enumerate(values):
        for b in values[i + 1 :]:
            same_game = (a.ruleset, a.difficulty) == (b.ruleset, b.difficulty)
            if same_game and a.min_seats <= b.max_seats and b.min_seats <= a.max_seats:
                # Otherwise a match could belong to two ladders.
                raise ImproperlyConfigured(f"ladders {a.key} and {b.key} overlap")
    return built


def ladder_list() -> list[Ladder]:
    """Configured ladders, the default first, then by key."""
    return sorted(ladders().values(), key=lambda lad: (not lad.is_default, lad.key))


def ladder_default() -> Ladder:
    return ladders()[settings.LADDER_DEFAULT_LADDER]


def ladder_get(key: str | None = None) -> Ladder:
    """The ladder named ``key`` (empty: the default), or NotFound naming the known ones."""
    known = ladders()
    if not key:
        return known[settings.LADDER_DEFAULT_LADDER]
    ladder = known.get(key)
    if ladder is None:
        raise NotFound(f"no ladder {key[:40]!r}; ladders: {', '.join(sorted(known))}")
    return ladder


def ladder_for(*, ruleset: str, difficulty: str, seats: int) -> Ladder | None:
    """The ladder that rates such a match, if one is configured (at most one can be)."""
    for ladder in ladders().values():
        if (ladder.ruleset, ladder.difficulty) == (ruleset, difficulty) and ladder.plays(seats):
            return ladder
    return None
