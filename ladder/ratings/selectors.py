"""Leaderboards, rating history and opponents near a rating, per ladder.

Every read here is served by an index and runs a fixed number of queries:
the leaderboard walks ``botrating_board_idx`` (ladder, rating desc, bot), a
bot's history walks ``matchseat_bot_result_idx`` (bot, result desc), and
opponents are the nearest entries above and below a rating.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models import QuerySet

from ladder.bots.models import Bot, BotRating
from ladder.bots.selectors import ranked, with_rating
from ladder.ladders import Ladder, ladder_get
from ladder.matches.models import MatchSeat
from ladder.ratings import elo
from ladder.ratings.elo import Uncertainty

__all__ = [
    "Uncertainty",
    "bot_rating_history",
    "leaderboard_list",
    "opponents_near",
    "rating_uncertainty",
]


def leaderboard_list(
    *,
    kind: str = "",
    owner: str = "",
    search: str = "",
    provisional: bool | None = None,
    include_inactive: bool = False,
    ladder: str | None = None,
) -> QuerySet[Bot]:
    """Bots with an entry on ``ladder`` by rating (ties by id); retired bots never appear.

    The bots carry ``rating``, ``games``, ``wins`` and ``rating_ladder`` (see
    ``ladder.bots.selectors.with_rating``).
    """
    qs = ranked(Bot.objects.filter(retired_at__isnull=True), ladder=ladder)
    if not include_inactive:
        qs = qs.filter(is_active=True)
    if kind:
        qs = qs.filter(kind=kind)
    if owner:
        qs = qs.filter(owner__username=owner)
    if search:
        qs = qs.filter(name__icontains=search)
    # On the annotation (unknown to django-stubs): a second filter() on ``ratings__``
    # would join the entries again.
    if provisional is True:
        qs = qs.filter(games__lt=settings.LADDER_PROVISIONAL_GAMES)  # type: ignore[misc]
    elif provisional is False:
        qs = qs.filter(games__gte=settings.LADDER_PROVISIONAL_GAMES)  # type: ignore[misc]
    return qs


def rating_uncertainty(*, rating: int, games: int) -> Uncertainty:
    """Games played, 95 % interval in points (model in ``elo`` docstring), provisional flag."""
    return elo.uncertainty(rating, games, provisional_below=settings.LADDER_PROVISIONAL_GAMES)


def bot_rating_history(
    *, bot_id: int, limit: int = 200, ladder: str | None = None
) -> QuerySet[MatchSeat]:
    """The bot's recorded seats on ``ladder`` in recording order (oldest first), the latest
    ``limit`` of them, each with its ``result`` (``result_id`` is the recording sequence)."""
    key = ladder_get(ladder).key
    latest = (
        MatchSeat.objects.filter(bot_id=bot_id, result__isnull=False, match__ladder=key)
        .order_by("-result_id")
        .values("pk")[:limit]
    )
    return (
        MatchSeat.objects.filter(pk__in=latest)
        .select_related("result")
        .defer("result__data")  # the engine's whole Result: not part of a history
        .order_by("result_id")
    )


def opponents_near(
    *, bot: Bot, count: int, ladder: Ladder | None = None, window: int = 50
) -> list[Bot]:
    """Up to ``count`` playable bots nearest to ``bot``'s rating on ``ladder``.

    Reads at most ``window`` entries on each side of the rating (two index range
    scans), so the cost does not grow with the ladder; the matchmaker of the
    workers can do better (pairing history, fairness).
    """
    key = (ladder or ladder_get(None)).key
    rating = getattr(bot, "rating", None)
    if rating is None or getattr(bot, "rating_ladder", None) != key:
        entry = BotRating.objects.filter(bot=bot, ladder=key).values_list("rating", flat=True)
        rating = entry.first() or settings.LADDER_ELO_START
    playable = BotRating.objects.filter(
        ladder=key,
        bot__is_active=True,
        bot__retired_at__isnull=True,
        bot__current_version__isnull=False,
    ).exclude(bot=bot)
    above = playable.filter(rating__gte=rating).order_by("rating", "bot_id")[:window]
    below = playable.filter(rating__lt=rating).order_by("-rating", "-bot_id")[:window]
    near = sorted(
        [*above.values_list("bot_id", "rating"), *below.values_list("bot_id", "rating")],
        key=lambda row: (abs(row[1] - rating), row[0]),
    )[:count]
    bots = with_rating(Bot.objects.filter(pk__in=[pk for pk, _ in near]), ladder=key).in_bulk()
    return [bots[pk] for pk, _ in near]
