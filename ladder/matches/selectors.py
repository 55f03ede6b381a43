"""Read-side queries for matches (prefetching so list pages stay at a fixed query count)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import (
    F,
    Func,
    OuterRef,
    Prefetch,
    QuerySet,
    Subquery,
)

from ladder.accounts.models import User
from ladder.bots.models import Bot
from ladder.common.exceptions import NotFound, PermissionDenied
from ladder.matches.models import Match, MatchSeat, Tournament
from ladder.tournaments.standings import Outcome, Standing, standings


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


@dataclass(frozen=True)
class OpponentRecord:
    """How one bot fared against one opponent over the finished matches they shared.

    Pairwise, as the rating counts it: in a 4-seat match a bot meets each of
    the three others once, ahead of, behind or level with it.
    """

    opponent_id: int
    opponent_name: str
    matches: int
    ahead: int
    behind: int
    level: int


def bot_opponent_records(*, bot_id: int, limit: int | None = None) -> list[OpponentRecord]:
    """The bot's record against the opponents it met most (all, or ``limit``).

    Most met first, ties by opponent id (the older bot first).

    Three plain index reads (the bot's recorded seats, the other seats of those
    matches, the shown opponents' names) tallied here: a self-join aggregated
    in the database costs far more for a bot with thousands of matches.
    """
    recorded = MatchSeat.objects.filter(bot_id=bot_id, rank__isnull=False)
    mine = dict(recorded.values_list("match_id", "rank"))
    if not mine:
        return []
    others = (
        MatchSeat.objects.filter(match_id__in=recorded.values("match_id"), rank__isnull=False)
        .exclude(bot_id=bot_id)
        .values_list("match_id", "bot_id", "rank")
    )
    tally: dict[int, list[int]] = {}  # opponent -> [matches, ahead, behind, level]
    for match_id, opponent, rank in others:
        line = tally.setdefault(opponent, [0, 0, 0, 0])
        line[0] += 1
        mine_rank = mine[match_id]
        line[1 if mine_rank < rank else 2 if mine_rank > rank else 3] += 1
    ordered = sorted(tally.items(), key=lambda item: (-item[1][0], item[0]))[:limit]
    names = dict(Bot.objects.filter(pk__in=[pk for pk, _ in ordered]).values_list("pk", "name"))
    return [
        OpponentRecord(
            opponent_id=pk,
            opponent_name=names[pk],
            matches=n,
            ahead=ahead,
            behind=behind,
            level=level,
        )
        for pk, (n, ahead, behind, level) in ordered
    ]


def bot_match_count(*, bot_id: int) -> int:
    """How many matches the bot has a seat in (one index count, no join)."""
    return MatchSeat.objects.filter(bot_id=bot_id).count()


def tournament_list() -> QuerySet[Tournament]:
    """Tournaments newest first, with how many bots take part and matches were played.

    Counted by correlated subqueries (each an index range), not by joining every
    tournament with all its matches and participants.
    """
    participants = (
        Tournament.participants.through.objects.filter(tournament=OuterRef("pk"))
        .order_by()
        .annotate(n=Func(F("pk"), function="COUNT"))
        .values("n")
    )
    finished = (
        Match.objects.filter(tournament=OuterRef("pk"), status=Match.Status.FINISHED)
        .order_by()
        .annotate(n=Func(F("pk"), function="COUNT"))
        .values("n")
    )
    return Tournament.objects.annotate(
        participant_count=Subquery(participants), finished_count=Subquery(finished)
    ).order_by("-created_at", "-id")


def tournament_detail(*, tournament_id: int) -> Tournament:
    """One tournament or NotFound."""
    tournament = Tournament.objects.filter(pk=tournament_id).first()
    if tournament is None:
        raise NotFound("no such tournament")
    return tournament


@dataclass(frozen=True)
class StandingLine:
    """A line of ``ladder.tournaments.standings`` with the bot's name and owner for a page."""

    standing: Standing
    bot_name: str
    owner: str


def tournament_standings(*, tournament: Tournament) -> list[StandingLine]:
    """Standings of a tournament from its played matches, best first; three queries.

    Scored by ``ladder.tournaments.standings.standings`` (pairwise points, its
    tie-breaks and shared ranks); errored matches are counted, not scored.
    Participants without a match yet are listed with nothing.
    """
    seats = MatchSeat.objects.filter(
        match__tournament_id=tournament.pk,
        match__status__in=[Match.Status.FINISHED, Match.Status.ERRORED],
    ).values_list("match_id", "match__status", "bot_id", "rank")
    by_match: dict[int, list[tuple[int, int | None]]] = {}
    errored: set[int] = set()
    for match_id, status, bot_id, rank in seats.order_by("match_id", "seat"):
        by_match.setdefault(match_id, []).append((bot_id, rank))
        if status == Match.Status.ERRORED:
            errored.add(match_id)
    outcomes = [
        Outcome(
            seats=[bot for bot, _ in seated],
            ranks=None if match_id in errored else [rank or 0 for _, rank in seated],
        )
        for match_id, seated in by_match.items()
    ]
    seated_bots = {bot for seated in by_match.values() for bot, _ in seated}
    entered = set(tournament.participants.values_list("pk", flat=True))
    bots = Bot.objects.select_related("owner").in_bulk(seated_bots | entered)
    table = standings(
        entered | seated_bots,
        outcomes,
        swiss=tournament.format == Tournament.Format.SWISS,
    )
    return [
        StandingLine(standing=row, bot_name=bots[row.bot].name, owner=bots[row.bot].owner.username)
        for row in table
    ]
