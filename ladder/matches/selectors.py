"""Read-side queries for matches (prefetching so list pages stay at a fixed query count)."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from ladder.common.exceptions import NotFound
from ladder.matches.models import Match, MatchSeat


def _seats_prefetch() -> Prefetch:
    return Prefetch(
        "seats",
        queryset=MatchSeat.objects.select_related("bot", "version").order_by("seat"),
    )


def match_list(
    *, bot_id: int | None = None, status: str = "", tournament_id: int | None = None
) -> QuerySet[Match]:
    """Matches newest first, filterable by bot, status and tournament."""
    qs = Match.objects.select_related("result", "tournament").prefetch_related(_seats_prefetch())
    if bot_id is not None:
        qs = qs.filter(seats__bot_id=bot_id)
    if status:
        qs = qs.filter(status=status)
    if tournament_id is not None:
        qs = qs.filter(tournament_id=tournament_id)
    return qs.order_by("-created_at", "-id")


def bot_matches(*, bot_id: int, status: str = "") -> QuerySet[Match]:
    """Matches of one bot (the gRPC 'matches of a bot')."""
    return match_list(bot_id=bot_id, status=status)


def match_detail(*, match_id: int) -> Match:
    """One match with its seats and result, or NotFound."""
    match = (
        Match.objects.select_related("result", "tournament")
        .prefetch_related(_seats_prefetch())
        .filter(pk=match_id)
        .first()
    )
    if match is None:
        raise NotFound("no such match")
    return match
