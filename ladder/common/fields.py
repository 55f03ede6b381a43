"""Serializer fields for the facts every API shows the same way.

Ratings are stored in integer hundredths and shown in Elo points
(``elo.points``); their uncertainty comes from ``elo.uncertainty`` with the
configured provisional threshold. Database ids are 64-bit: inputs that name
one are bounded so a larger number is a 400, not a database error.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from ladder.common import elo

MAX_ID = 2**63 - 1


class WholeNumberField(serializers.IntegerField):
    """An integer input written as one: ``12``, not ``12.0``, ``1e3`` or ``" 12"``.

    DRF's IntegerField reads ``"12.0"`` as 12; the schema says integer, so a query
    (or form) value must be digits, optionally signed.
    """

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, str) and not (data.isascii() and data.lstrip("-").isdigit()):
            self.fail("invalid")
        return int(super().to_internal_value(data))


def IdField(**kwargs: Any) -> serializers.IntegerField:
    """An input naming a database row: 1 .. 2^63-1."""
    return WholeNumberField(min_value=1, max_value=MAX_ID, **kwargs)


@extend_schema_field(OpenApiTypes.DOUBLE)
class PointsField(serializers.Field):
    """A rating (or rating change) in Elo points; stored as hundredths."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(read_only=True, **kwargs)

    def to_representation(self, value: int) -> float:
        return elo.points(value)


def uncertainty(obj: Any) -> elo.Uncertainty:
    """The uncertainty of anything with ``rating``, ``sigma`` and ``games``."""
    return elo.sigma_uncertainty(
        obj.rating,
        obj.sigma,
        obj.games,
        provisional_above=elo.provisional_threshold(settings.LADDER_PROVISIONAL_SIGMA),
        min_games=settings.LADDER_PROVISIONAL_GAMES,
    )


@extend_schema_field(OpenApiTypes.BOOL)
class ProvisionalField(serializers.Field):
    """True while fewer than ``LADDER_PROVISIONAL_GAMES`` games (10) or sigma above
    ``LADDER_PROVISIONAL_SIGMA`` (135 points)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(read_only=True, source="*", **kwargs)

    def to_representation(self, value: Any) -> bool:
        return uncertainty(value).provisional


@extend_schema_field(
    {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2, "nullable": True}
)
class Interval95Field(serializers.Field):
    """The 95 % interval of the rating in points; null before the first game."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(read_only=True, source="*", **kwargs)

    def to_representation(self, value: Any) -> list[float] | None:
        iv = uncertainty(value).interval95
        return None if iv is None else list(iv)


class RatingSerializer(serializers.Serializer):
    """A rating on one ladder: from a bot annotated by ``with_rating`` or a ``BotRating``."""

    rating = PointsField(
        help_text="The rating on the Elo scale, whichever system the ladder rates with: a new"
        " bot starts at 1500; 400 points between two bots is about 10 : 1 odds of finishing"
        " ahead in a two-seat game (Elo's rating, or the Weng-Lin system's mean mu)."
    )
    sigma = PointsField(help_text="The rating's uncertainty: its standard deviation, points.")
    score = PointsField(
        help_text="The rank rating the leaderboard ranks by: rating - k * sigma"
        " (LADDER_RATING_K_SIGMA, 3), never below 0."
    )
    games = serializers.IntegerField(help_text="Rated games this season.")
    wins = serializers.IntegerField(help_text="Rated games it finished first in.")
    provisional = ProvisionalField(
        help_text="True while the bot has fewer than 10 rated games or its sigma is above"
        " 135 points (a 95 % interval wider than ± 265; LADDER_PROVISIONAL_GAMES and"
        " LADDER_PROVISIONAL_SIGMA). Under Elo that is its first 9 games."
    )
    interval95 = Interval95Field(
        help_text="The 95 % interval, rating ± 1.96 sigma, in points; null before any game."
    )
