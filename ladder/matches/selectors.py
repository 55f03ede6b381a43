"""Read-side queries for matches, replays and tournaments.

Lists come back newest first (``-id``) for keyset pagination, with their seats,
bots, versions and result fetched in a fixed number of queries whatever the
page or the data size; the indexes in ``models.py`` serve every filter.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, IntegerField, OuterRef, Prefetch, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from ladder.bots.models import Bot, BotVersion
from ladder.bots.selectors import with_rating
from ladder.common.exceptions import NotFound
from ladder.matches.models import Match, MatchSeat, Tournament


def seats_shown() -> QuerySet[MatchSeat]:
    """Seats in seat order with what a match shows of their bot and version as plain
    attributes: ``bot_name``, ``bot_kind``, ``version_number``.

    Read by a primary-key lookup per seat in the same query: a join would let the
    planner hash every bot and version to show one page of seats, and prefetching
    the bots as objects costs more than the rest of the page.
    """
    bot = Bot.objects.filter(pk=OuterRef("bot_id"))
    version = BotVersion.objects.filter(pk=OuterRef("version_id"))
    return MatchSeat.objects.order_by("seat").annotate(
        bot_name=Subquery(bot.values("name")[:1]),
        bot_kind=Subquery(bot.values("kind")[:1]),
        version_number=Subquery(version.values("number")[:1]),
    )


def _with_seats(qs: QuerySet[Match]) -> QuerySet[Match]:
    return qs.select_related("result").prefetch_related(Prefetch("seats", queryset=seats_shown()))


def match_list(
    *,
    bot_id: int | None = None,
    status: str = "",
    tournament_id: int | None = None,
    ladder: str = "",
) -> QuerySet[Match]:
    """Matches newest first, filterable by bot, status, tournament and ladder key."""
    qs = Match.objects.all()
    if bot_id is not None:
        qs = qs.filter(pk__in=MatchSeat.objects.filter(bot_id=bot_id).values("match_id"))
    if status:
        qs = qs.filter(status=status)
    if tournament_id is not None:
        qs = qs.filter(tournament_id=tournament_id)
    if ladder:
        qs = qs.filter(ladder=ladder)
    return _with_seats(qs).order_by("-id")


def bot_matches(*, bot_id: int, status: str = "") -> QuerySet[Match]:
    """Matches of one bot (the gRPC 'matches of a bot')."""
    return match_list(bot_id=bot_id, status=status)


def match_detail(*, match_id: int) -> Match:
    """One match with its seats and result, or NotFound."""
    match = _with_seats(Match.objects.filter(pk=match_id)).first()
    if match is None:
        raise NotFound("no such match")
    return match


@dataclass(frozen=True)
class ReplayFile:
    match_id: int
    name: str
    sha256: str
    size: int


def match_replay_file(*, match_id: int) -> ReplayFile:
    """Where a match's replay is stored, or NotFound (no match, or no replay yet)."""
    row = (
        Match.objects.filter(pk=match_id)
        .values_list("replay", "replay_sha256", "replay_size")
        .first()
    )
    if row is None or not row[0] or not row[1]:
        raise NotFound("this match has no replay")
    return ReplayFile(match_id=match_id, name=row[0], sha256=row[1], size=row[2])


def _participant_count() -> Coalesce:
    through = Tournament.participants.through.objects.filter(tournament_id=OuterRef("pk"))
    counted = (
        through.order_by().values("tournament_id").annotate(n=Count("pk")).values("n")  # type: ignore[misc]
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def tournament_list() -> QuerySet[Tournament]:
    """Tournaments newest first, each with ``participant_count`` (not the participants)."""
    return Tournament.objects.annotate(participant_count=_participant_count()).order_by(
        "-created_at", "-id"
    )


def tournament_get(*, tournament_id: int) -> Tournament:
    tournament = tournament_list().filter(pk=tournament_id).first()
    if tournament is None:
        raise NotFound("no such tournament")
    return tournament


def tournament_participants(*, tournament: Tournament, ladder: str | None = None) -> QuerySet[Bot]:
    """A tournament's bots by name, with their rating on ``ladder``."""
    return with_rating(Bot.objects.filter(tournaments=tournament), ladder=ladder).order_by("name")
