"""Read side of tournaments, duplicate deals and version comparisons.

A comparison's answer is computed from its matches whenever it is read
(``ladder.tournaments.comparison``): nothing is stored that the matches do not
already say, so it is reproducible and never stale.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import (
    Count,
    F,
    Func,
    IntegerField,
    OuterRef,
    Prefetch,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from ladder.accounts.models import User
from ladder.bots.models import Bot
from ladder.bots.selectors import with_rating
from ladder.common.exceptions import NotFound, PermissionDenied
from ladder.matches.models import Match, MatchSeat
from ladder.matches.selectors import seats_shown
from ladder.matches.services import OPEN_STATES
from ladder.ratings.elo import pair_score
from ladder.tournaments.comparison import Comparison, DealRanks, compare
from ladder.tournaments.models import Deal, Tournament, VersionComparison
from ladder.tournaments.standings import Outcome, Standing, standings


@dataclass(frozen=True)
class ComparisonReport:
    """Where a comparison stands and, from two complete deals on, its answer."""

    comparison: VersionComparison
    matches: int
    open: int  # queued or running
    errored: int  # errored or cancelled: their deals do not count
    complete_deals: int  # deals whose every rotation finished for both versions
    result: Comparison | None

    @property
    def status(self) -> str:
        return "running" if self.open else "finished"

    @property
    def summary(self) -> str:
        old = f"v{self.comparison.old_version.number}"
        new = f"v{self.comparison.new_version.number}"
        if self.result is None:
            return (
                f"{new} - {old}: {self.complete_deals} complete deals so far; "
                "an answer needs at least 2"
            )
        return self.result.summary(old, new)


def comparison_list(*, user: User) -> QuerySet[VersionComparison]:
    """The user's comparisons (staff: everyone's), newest first."""
    qs = VersionComparison.objects.select_related("bot", "old_version", "new_version")
    return (qs if user.is_staff else qs.filter(bot__owner=user)).order_by("-id")


def comparison_get(*, comparison_id: int, user: User) -> ComparisonReport:
    """A comparison of one of the user's bots (staff: any) with its answer so far."""
    comparison = comparison_list(user=user).filter(pk=comparison_id).first()
    if comparison is None:
        if VersionComparison.objects.filter(pk=comparison_id).exists():
            raise PermissionDenied("only the bot's owner sees its comparisons")
        raise NotFound("no such comparison")
    return comparison_report(comparison)


def comparison_report(comparison: VersionComparison) -> ComparisonReport:
    """The answer over the deals complete on both sides, in deal order (one query)."""
    rows = MatchSeat.objects.filter(
        match__deal__comparison=comparison, bot_id=comparison.bot_id
    ).values_list(
        "match__deal__comparison_index",
        "match__deal__comparison_side",
        "match__deal__seats",
        "match__status",
        "rank",
    )
    ranks: dict[tuple[int, str], list[int]] = {}
    broken: set[int] = set()
    seats_of: dict[int, int] = {}
    total = open_ = errored = 0
    for index, side, seats, status, rank in rows:
        total += 1
        if index is None:  # a comparison's deals always have an index (constraint)
            continue
        seats_of[index] = seats
        if status in OPEN_STATES:
            open_ += 1
            broken.add(index)
        elif status != Match.Status.FINISHED or rank is None:
            errored += 1
            broken.add(index)
        else:
            ranks.setdefault((index, side), []).append(rank)
    complete = [
        i
        for i in sorted(seats_of)
        if i not in broken
        and all(len(ranks.get((i, side), [])) == seats_of[i] for side in ("old", "new"))
    ]
    result = None
    if len(complete) >= 2:
        result = compare(
            [DealRanks(ranks[(i, "old")]) for i in complete],
            [DealRanks(ranks[(i, "new")]) for i in complete],
        )
    return ComparisonReport(
        comparison=comparison,
        matches=total,
        open=open_,
        errored=errored,
        complete_deals=len(complete),
        result=result,
    )


def _participant_count() -> Coalesce:
    through = Tournament.participants.through.objects.filter(tournament_id=OuterRef("pk"))
    counted = (
        # COUNT(*): read from the index alone (COUNT(pk) visited every participant's row).
        through.order_by().values("tournament_id").annotate(n=Count("*")).values("n")  # type: ignore[misc]
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def _finished_count() -> Subquery:
    finished = (
        Match.objects.filter(tournament=OuterRef("pk"), status=Match.Status.FINISHED)
        .order_by()
        .annotate(n=Func(F("pk"), function="COUNT"))
        .values("n")
    )
    return Subquery(finished, output_field=IntegerField())


def tournament_list() -> QuerySet[Tournament]:
    """Tournaments newest first, each with ``participant_count`` and ``finished_count``
    (counted by correlated subqueries on indexes, not the participants or matches)."""
    return Tournament.objects.annotate(
        participant_count=_participant_count(), finished_count=_finished_count()
    ).order_by("-created_at", "-id")


def tournament_get(*, tournament_id: int) -> Tournament:
    tournament = tournament_list().filter(pk=tournament_id).first()
    if tournament is None:
        raise NotFound("no such tournament")
    return tournament


def tournament_participants(*, tournament: Tournament, ladder: str | None = None) -> QuerySet[Bot]:
    """A tournament's bots by name, with their rating on ``ladder``."""
    return with_rating(Bot.objects.filter(tournaments=tournament), ladder=ladder).order_by("name")


@dataclass(frozen=True)
class StandingLine:
    """A line of ``ladder.tournaments.standings`` with the bot's name and owner for a page."""

    standing: Standing
    bot_name: str
    owner: str


def tournament_standings(*, tournament: Tournament) -> list[StandingLine]:
    """Standings of a tournament from its played matches, best first; three queries.

    Scored by ``ladder.tournaments.standings.standings`` (pairwise points, its
    tie-breaks and shared ranks); errored matches are counted, not scored; a Swiss
    bye scores a win.
    Participants without a match yet are listed with nothing. Names come with
    the rows (no list of ids sent back): a tournament may have thousands of bots.
    """
    seats = MatchSeat.objects.filter(
        match__tournament_id=tournament.pk,
        match__status__in=[Match.Status.FINISHED, Match.Status.ERRORED],
    ).values_list(
        "match_id", "match__status", "bot_id", "rank", "bot__name", "bot__owner__username"
    )
    names: dict[int, tuple[str, str]] = {}
    by_match: dict[int, list[tuple[int, int | None]]] = {}
    errored: set[int] = set()
    for match_id, status, bot_id, rank, name, owner in seats.order_by("match_id", "seat"):
        by_match.setdefault(match_id, []).append((bot_id, rank))
        names[bot_id] = (name, owner)
        if status == Match.Status.ERRORED:
            errored.add(match_id)
    outcomes = [
        Outcome(
            seats=[bot for bot, _ in seated],
            ranks=None if match_id in errored else [rank or 0 for _, rank in seated],
        )
        for match_id, seated in by_match.items()
    ]
    entered = tournament.participants.values_list("pk", "name", "owner__username")
    names.update((pk, (name, owner)) for pk, name, owner in entered)
    byes = list(tournament.byes.values_list("bot_id", flat=True))
    table = standings(
        names, outcomes, byes=byes, swiss=tournament.format == Tournament.Format.SWISS
    )
    return [
        StandingLine(standing=row, bot_name=names[row.bot][0], owner=names[row.bot][1])
        for row in table
    ]


@dataclass(frozen=True)
class DealBotResult:
    """One bot's result over a duplicate deal: its rank in each rotation (None: not
    played yet, or errored), first places, mean rank and pairwise points over the
    rotations played (1 per opponent out-ranked, ½ per tie, as tournaments count)."""

    bot_id: int
    bot_name: str
    ranks: list[int | None]
    firsts: int
    mean_rank: float | None
    points: float


@dataclass(frozen=True)
class DealSummary:
    deal: Deal
    matches: list[Match]  # by rotation, with ``seats_shown`` seats
    results: list[DealBotResult]  # best first: points, then mean rank

    @property
    def complete(self) -> bool:
        return all(
            m.status not in (Match.Status.QUEUED, Match.Status.RUNNING) for m in self.matches
        )


def deal_get(*, deal_id: int) -> DealSummary:
    """A duplicate deal: its matches by rotation and each bot's result over the set."""
    deal = Deal.objects.filter(pk=deal_id).first()
    if deal is None:
        raise NotFound("no such deal")
    matches = list(
        Match.objects.filter(deal=deal)
        .order_by("deal_rotation")
        .prefetch_related(Prefetch("seats", queryset=seats_shown()))
    )
    return DealSummary(deal=deal, matches=matches, results=deal_results(matches))


def deal_results(matches: list[Match]) -> list[DealBotResult]:
    """Each bot's result over the rotations ``matches`` (of one deal, ``seats_shown``
    seats prefetched), best first. Only finished matches count."""
    rows: dict[int, tuple[str, list[int | None]]] = {}
    points: dict[int, float] = {}
    for rotation, match in enumerate(matches):
        seats = list(match.seats.all())
        finished = match.status == Match.Status.FINISHED
        for seat in seats:
            name, ranks = rows.setdefault(seat.bot_id, (seat.bot_name, [None] * len(matches)))  # type: ignore[attr-defined]
            rank = seat.rank if finished else None
            ranks[rotation] = rank
            if rank is None:
                continue
            points[seat.bot_id] = points.get(seat.bot_id, 0.0) + sum(
                pair_score(rank, other.rank) for other in seats if other is not seat and other.rank
            )
    results = []
    for bot_id, (name, ranks) in rows.items():
        played = [r for r in ranks if r is not None]
        results.append(
            DealBotResult(
                bot_id=bot_id,
                bot_name=name,
                ranks=ranks,
                firsts=sum(r == 1 for r in played),
                mean_rank=sum(played) / len(played) if played else None,
                points=points.get(bot_id, 0.0),
            )
        )
    return sorted(results, key=lambda r: (-r.points, r.mean_rank or 99, r.bot_id))


@dataclass(frozen=True)
class BotDeal:
    """One bot's result over one duplicate deal, for its page: ranks by rotation
    (None: not finished), first places and mean rank over the rotations played."""

    deal_id: int
    match_id: int  # its first rotation, to link to
    ranks: list[int | None]
    firsts: int
    mean_rank: float | None


def bot_deals(*, bot_id: int, limit: int = 10) -> list[BotDeal]:
    """The bot's latest ``limit`` duplicate deals, newest first (two index reads)."""
    recent = (
        MatchSeat.objects.filter(bot_id=bot_id, match__deal__isnull=False)
        .order_by("-match_id")
        .values_list("match__deal_id", flat=True)[: limit * 4]
    )
    deal_ids: list[int] = []
    for deal_id in recent:
        if deal_id is not None and deal_id not in deal_ids:
            deal_ids.append(deal_id)
    deal_ids = deal_ids[:limit]
    rows = MatchSeat.objects.filter(bot_id=bot_id, match__deal_id__in=deal_ids).values_list(
        "match__deal_id", "match__deal__seats", "match__deal_rotation", "match_id",
        "match__status", "rank",
    )  # fmt: skip
    ranks: dict[int, list[int | None]] = {}
    first_match: dict[int, int] = {}
    for deal_id, seats, rotation, match_id, status, rank in rows:
        line = ranks.setdefault(deal_id, [None] * seats)
        if rotation is not None and rotation < seats:
            line[rotation] = rank if status == Match.Status.FINISHED else None
        if rotation == 0:
            first_match[deal_id] = match_id
        else:
            first_match.setdefault(deal_id, match_id)
    out = []
    for deal_id in deal_ids:
        played = [r for r in ranks.get(deal_id, []) if r is not None]
        out.append(
            BotDeal(
                deal_id=deal_id,
                match_id=first_match[deal_id],
                ranks=ranks.get(deal_id, []),
                firsts=sum(r == 1 for r in played),
                mean_rank=sum(played) / len(played) if played else None,
            )
        )
    return out


@dataclass(frozen=True)
class RotationCell:
    """One match of a comparison: its rotation, where it stands, the compared bot's rank."""

    match_id: int
    rotation: int
    status: str
    rank: int | None


@dataclass(frozen=True)
class ComparisonDeal:
    """One deal of a comparison: the same cave and opponents, each version in every rotation."""

    index: int
    seed: int
    seats: int
    old: list[RotationCell]
    new: list[RotationCell]


def comparison_deals(comparison: VersionComparison) -> list[ComparisonDeal]:
    """Every deal's matches side by side, old and new version, in rotation order (one query)."""
    rows = (
        MatchSeat.objects.filter(match__deal__comparison=comparison, bot_id=comparison.bot_id)
        .values_list(
            "match_id",
            "match__deal_rotation",
            "match__status",
            "rank",
            "match__deal__comparison_index",
            "match__deal__comparison_side",
            "match__deal__seed",
            "match__deal__seats",
        )
        .order_by("match__deal__comparison_index", "match__deal_rotation")
    )
    deals: dict[int, ComparisonDeal] = {}
    for match_id, rotation, status, rank, index, side, seed, seats in rows:
        if index is None:  # a comparison's deals always have an index (constraint)
            continue
        deal = deals.setdefault(index, ComparisonDeal(index, seed, seats, [], []))
        cell = RotationCell(match_id, rotation or 0, status, rank)
        (deal.new if side == "new" else deal.old).append(cell)
    return [deals[i] for i in sorted(deals)]
