"""Read side of tournaments, duplicate deals and version comparisons.

A comparison's answer is computed from its matches whenever it is read
(``ladder.tournaments.comparison``): nothing is stored that the matches do not
already say, so it is reproducible and never stale.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, overload

from django.db import connection
from django.db.models import (
    Count,
    Exists,
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
from ladder.common.compiled import SLICE, Compiled, marker
from ladder.common.elo import pair_score
from ladder.common.exceptions import NotFound, PermissionDenied
from ladder.matches.creation import OPEN_STATES
from ladder.matches.models import Match, MatchSeat, TournamentPairTally, TournamentTally
from ladder.matches.selectors import seats_shown
from ladder.tournaments.comparison import Comparison, DealRanks, compare
from ladder.tournaments.models import Deal, Tournament, VersionComparison
from ladder.tournaments.standings import Standing


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
        # COUNT(*) on the partial index of finished tournament matches: index-only.
        Match.objects.filter(tournament=OuterRef("pk"), status=Match.Status.FINISHED)
        .order_by()
        .values("tournament_id")
        .annotate(n=Count("*"))
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
    """Standings of a tournament, best first, every line (the REST and gRPC reads); one
    query. ``tournament_standings_table`` says how they are scored."""
    return tournament_standings_table(tournament=tournament)[:]


def tournament_standings_table(*, tournament: Tournament) -> StandingsTable:
    """Standings of a tournament, best first, from the counters kept when its results are
    recorded (``ladder.matches.tournament_tallies``): a sequence whose length and slices
    are each one query, so a page of them (``Paginator``) reads only its lines.

    Scored as ``ladder.tournaments.standings.standings`` scores the matches (pairwise
    points, its tie-breaks and shared ranks; errored matches counted, not scored; a
    Swiss bye scores a win), which the tests check against the seats. The database
    ranks them: a read costs a row per bot and the pairs of bots that met on the same
    points, never the matches played. ``Standing.opponents`` is left empty (Buchholz is
    summed by the query). Participants without a match yet are listed with nothing.
    """
    return StandingsTable(tournament.pk, swiss=tournament.format == Tournament.Format.SWISS)


class StandingsTable:
    """A tournament's standings, read a slice at a time (see ``tournament_standings_table``):
    what ``Paginator`` needs of a sequence (``count()``, slices), and iteration."""

    def __init__(self, tournament_id: int, *, swiss: bool) -> None:
        self.tournament_id = tournament_id
        self.swiss = swiss
        self._count: int | None = None

    def count(self) -> int:
        if self._count is None:
            with connection.cursor() as cur:
                cur.execute(
                    f"WITH {_ENTERED} SELECT COUNT(*) FROM entered", [self.tournament_id] * 3
                )
                self._count = int(cur.fetchone()[0])
        return self._count

    def __len__(self) -> int:
        return self.count()

    @overload
    def __getitem__(self, index: int) -> StandingLine: ...
    @overload
    def __getitem__(self, index: slice) -> list[StandingLine]: ...

    def __getitem__(self, index: int | slice) -> StandingLine | list[StandingLine]:
        if isinstance(index, int):
            if index < 0:
                index += len(self)
            lines = self._read(index, 1)
            if not lines:
                raise IndexError(index)
            return lines[0]
        start, stop, step = index.start or 0, index.stop, index.step
        if step not in (None, 1) or start < 0 or (stop is not None and stop < 0):
            return list(self)[index]
        return self._read(start, None if stop is None else max(stop - start, 0))

    def __iter__(self) -> Iterator[StandingLine]:
        return iter(self._read(0, None))

    def _read(self, offset: int, limit: int | None) -> list[StandingLine]:
        if limit == 0:
            return []
        sql, params = _standings_sql(
            self.tournament_id, swiss=self.swiss, limit=limit, offset=offset
        )
        with connection.cursor() as cur:
            cur.execute(sql, params)
            rows = cur.fetchall()
        return [
            StandingLine(
                standing=Standing(
                    bot, rank=rank, points=pts / 2, played=played, wins=wins, errored=errored,
                    byes=byes, head_to_head=h2h / 2, buchholz=buchholz / 2,
                ),
                bot_name=name,
                owner=owner,
            )
            for bot, rank, pts, played, wins, errored, byes, h2h, buchholz, name, owner in rows
        ]  # fmt: skip


_TALLY = TournamentTally._meta.db_table
_PAIR = TournamentPairTally._meta.db_table
# The bots of a tournament: those counted, and the participants without a match yet.
_ENTERED = f"""entered AS (
  SELECT bot_id, half_points + 2 * byes AS pts, played, wins, errored, byes
  FROM {_TALLY} WHERE tournament_id = %s
  UNION ALL
  SELECT p.bot_id, 0, 0, 0, 0, 0 FROM {Tournament.participants.through._meta.db_table} p
  WHERE p.tournament_id = %s AND NOT EXISTS (
    SELECT 1 FROM {_TALLY} x WHERE x.tournament_id = %s AND x.bot_id = p.bot_id
  )
)"""
# Head-to-head: the points a bot scored against the opponents it met that stand on the
# same points, summed over the pairs that met (joined in the database: never every
# pair of a tied group, thousands of bots may tie). Buchholz: the opponents' points,
# once per meeting. Both in halves, as the points.
_HEAD_TO_HEAD = f"""h2h AS (
  SELECT p.bot_id, SUM(p.half_points) AS v
  FROM {_PAIR} p
  JOIN {_TALLY} a ON a.tournament_id = p.tournament_id AND a.bot_id = p.bot_id
  JOIN {_TALLY} o ON o.tournament_id = p.tournament_id AND o.bot_id = p.opponent_id
  WHERE p.tournament_id = %s AND a.half_points + 2 * a.byes = o.half_points + 2 * o.byes
  GROUP BY p.bot_id
)"""
_BUCHHOLZ = f"""buchholz AS (
  SELECT p.bot_id, SUM(p.meetings * (o.half_points + 2 * o.byes)) AS v
  FROM {_PAIR} p
  JOIN {_TALLY} o ON o.tournament_id = p.tournament_id AND o.bot_id = p.opponent_id
  WHERE p.tournament_id = %s
  GROUP BY p.bot_id
)"""


def _standings_sql(
    tournament_id: int, *, swiss: bool, limit: int | None, offset: int
) -> tuple[str, list[int]]:
    """The ranked standings (``RANK()``: bots equal on every tie-break share the rank of
    the first of them, as ``ladder.tournaments.standings.ranked`` numbers them), best
    first, then by bot id; ``limit`` lines from ``offset``. Names are joined to the lines
    read only (not to every bot of the tournament before the window)."""
    buchholz = "COALESCE(b.v, 0)" if swiss else "0"
    # A constant in ORDER BY would be read as a column position: left out, not sorted on.
    tie_breaks = f"COALESCE(h.v, 0) DESC, {buchholz} DESC" if swiss else "COALESCE(h.v, 0) DESC"
    order = f"e.pts DESC, {tie_breaks}, e.wins DESC"
    sql = f"""WITH {_ENTERED}, {_HEAD_TO_HEAD}{f", {_BUCHHOLZ}" if swiss else ""},
ranked AS (
  SELECT e.bot_id, RANK() OVER (ORDER BY {order}) AS rank, e.pts, e.played, e.wins,
    e.errored, e.byes, COALESCE(h.v, 0) AS h2h, {buchholz} AS buchholz
  FROM entered e
  LEFT JOIN h2h h ON h.bot_id = e.bot_id
  {"LEFT JOIN buchholz b ON b.bot_id = e.bot_id" if swiss else ""}
  ORDER BY {order}, e.bot_id
  LIMIT %s OFFSET %s
)
SELECT r.bot_id, r.rank, r.pts, r.played, r.wins, r.errored, r.byes, r.h2h, r.buchholz,
  bot.name, owner.username
FROM ranked r
JOIN {Bot._meta.db_table} bot ON bot.id = r.bot_id
JOIN {User._meta.db_table} owner ON owner.id = bot.owner_id
ORDER BY r.rank, r.bot_id"""
    # No limit: more lines than any tournament has (both databases need a number).
    read = limit if limit is not None else 2**62
    return sql, [tournament_id] * (5 if swiss else 4) + [read, offset]


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


def _recent_deals(bot_id: int) -> QuerySet[Any, Any]:
    seats = MatchSeat.objects.filter(bot_id=bot_id, match__deal__isnull=False)
    recent = seats.order_by("-match_id").values_list("match__deal_id")
    return recent[SLICE[0] : SLICE[0] + SLICE[1]]


_RECENT_DEALS = Compiled(_recent_deals, [marker(1)], sliced=True)


def bot_deals(*, bot_id: int, limit: int = 10) -> list[BotDeal]:
    """The bot's latest ``limit`` duplicate deals, newest first (two index reads)."""
    recent = [row[0] for row in _RECENT_DEALS.rows(bot_id, limit=limit * 4)]
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
    seed: int | None  # None while the deal is in play (``match_reveal``'s rule)
    seats: int
    old: list[RotationCell]
    new: list[RotationCell]


def comparison_deals(comparison: VersionComparison) -> list[ComparisonDeal]:
    """Every deal's matches side by side, old and new version, in rotation order (one query).

    A deal's seed is its cave: it is shown by the rule of ``match_reveal`` (once a match
    of it is finished and none dealt from it is still queued or running), never while
    any of its rotations, on either side, may still be played.
    """
    twin_open = Match.objects.filter(seed=OuterRef("match__deal__seed"), status__in=OPEN_STATES)
    rows = (
        MatchSeat.objects.filter(match__deal__comparison=comparison, bot_id=comparison.bot_id)
        .annotate(twin_open=Exists(twin_open))
        .values_list(
            "match_id",
            "match__deal_rotation",
            "match__status",
            "rank",
            "match__deal__comparison_index",
            "match__deal__comparison_side",
            "match__deal__seed",
            "match__deal__seats",
            "twin_open",
        )
        .order_by("match__deal__comparison_index", "match__deal_rotation")
    )
    deals: dict[int, ComparisonDeal] = {}
    hidden: set[int] = set()
    played: set[int] = set()
    for match_id, rotation, status, rank, index, side, seed, seats, open_twin in rows:
        if index is None:  # a comparison's deals always have an index (constraint)
            continue
        deal = deals.setdefault(index, ComparisonDeal(index, seed, seats, [], []))
        if open_twin:
            hidden.add(index)
        if status == Match.Status.FINISHED:
            played.add(index)
        cell = RotationCell(match_id, rotation or 0, status, rank)
        (deal.new if side == "new" else deal.old).append(cell)
    return [
        deals[i] if i in played and i not in hidden else replace(deals[i], seed=None)
        for i in sorted(deals)
    ]
