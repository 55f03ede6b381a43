"""``MatchSpec``: what a new match (or each match of a duplicate deal) is to be.

One frozen value instead of a dozen keyword arguments: ``match_create`` and
``deal_create`` take it, and the tournaments, comparisons, the matchmaker and
the interfaces build it, so a new field is added in one place and reaches
every caller's type check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ladder.accounts.models import User


@dataclass(frozen=True)
class MatchSpec:
    """The bots in seat order and how their match is played, queued and counted.

    ``requested_by`` None is the system (the matchmaker, a tournament); a user
    must own one of the bots unless staff. ``ladder`` (a key; None: the default)
    decides the ruleset, the difficulty and whose ratings a rated match changes.
    ``versions`` pins a VALID version per bot id (a version comparison); the
    others play their current version. ``priority`` > 0 is played before ladder
    matches. ``tournament_id`` / ``tournament_round`` tie it to a tournament.
    """

    bot_ids: Sequence[int]
    requested_by: User | None = None
    seed: int | None = None
    difficulty: str | None = None
    rated: bool = True
    ladder: str | None = None
    versions: Mapping[int, int] = field(default_factory=dict)
    priority: int = 0
    tournament_id: int | None = None
    tournament_round: int | None = None

    def __post_init__(self) -> None:
        # Frozen means the caller's list cannot change it after the checks.
        object.__setattr__(self, "bot_ids", tuple(self.bot_ids))
        object.__setattr__(self, "versions", dict(self.versions or {}))

    @classmethod
    def of(cls, spec: MatchSpec | None, fields: Mapping[str, Any]) -> MatchSpec:
        """``spec`` itself, or one made of the keyword ``fields`` (a short call)."""
        if spec is not None:
            if fields:
                raise TypeError("give a MatchSpec or its fields, not both")
            return spec
        named = dict(fields)
        if "tournament" in named:  # the tournament row itself, as a caller holds it
            tournament = named.pop("tournament")
            named["tournament_id"] = None if tournament is None else tournament.pk
        return cls(**named)
