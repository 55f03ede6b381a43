"""Read-side queries for matches (prefetching so list pages stay at a fixed query count)."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from ladder.accounts.models import User
from ladder.common.exceptions import NotFound, PermissionDenied
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


def match_seat_log_for_owner(*, user: User, match_id: int, seat: int) -> MatchSeat:
    """A hosted seat with its captured log, for the owner of its bot or staff only.

    NotFound when the match or seat does not exist or has no log (remote bots have none).
    """
    found = (
        MatchSeat.objects.select_related("bot", "version")
        .filter(match_id=match_id, seat=seat)
        .first()
    )
    if found is None:
        raise NotFound(f"match {match_id} has no seat {seat}")
    if not (user.is_staff or user.pk == found.bot.owner_id):
        raise PermissionDenied("only the bot's owner (or staff) sees its log")
    if not found.log.name:
        raise NotFound(f"seat {seat} of match {match_id} has no log (only hosted seats do)")
    return found
