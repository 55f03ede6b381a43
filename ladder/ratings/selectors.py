"""Leaderboard and rating history."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import QuerySet

from ladder.bots.models import Bot
from ladder.matches.models import MatchSeat
from ladder.ratings import elo


def leaderboard_list(
    *,
    kind: str = "",
    owner: str = "",
    search: str = "",
    provisional: bool | None = None,
    include_inactive: bool = False,
) -> QuerySet[Bot]:
    """Bots by rating (stable tie-break by id); retired bots never appear."""
    qs = Bot.objects.select_related("owner").filter(retired_at__isnull=True)
    if not include_inactive:
        qs = qs.filter(is_active=True)
    if kind:
        qs = qs.filter(kind=kind)
    if owner:
        qs = qs.filter(owner__username=owner)
    if search:
        qs = qs.filter(name__icontains=search)
    if provisional is True:
        qs = qs.filter(games__lt=settings.LADDER_PROVISIONAL_GAMES)
    elif provisional is False:
        qs = qs.filter(games__gte=settings.LADDER_PROVISIONAL_GAMES)
    return qs.order_by("-rating", "id")


@dataclass(frozen=True)
class Uncertainty:
    games: int
    provisional: bool
    interval95: tuple[float, float] | None


def rating_uncertainty(*, rating: int, games: int) -> Uncertainty:
    """Games played, 95 % interval in points (model in ``elo`` docstring), provisional flag."""
    iv = elo.interval95(rating, games)
    return Uncertainty(
        games=games,
        provisional=games < settings.LADDER_PROVISIONAL_GAMES,
        interval95=None if iv is None else (iv[0] / elo.SCALE, iv[1] / elo.SCALE),
    )


def bot_rating_history(*, bot_id: int, limit: int = 200) -> QuerySet[MatchSeat]:
    """The bot's rated seats in recording order (oldest first), at most ``limit`` latest."""
    latest = (
        MatchSeat.objects.filter(bot_id=bot_id, match__result__isnull=False)
        .select_related("match__result")
        .order_by("-match__result__id")[:limit]
    )
    ids = list(latest.values_list("pk", flat=True))
    return (
        MatchSeat.objects.filter(pk__in=ids)
        .select_related("match__result")
        .order_by("match__result__id")
    )
