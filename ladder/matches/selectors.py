"""Read-side queries for matches, replays and tournaments.

Lists come back newest first (``-id``) for keyset pagination, with their seats,
bots, versions and result fetched in a fixed number of queries whatever the
page or the data size; the indexes in ``models.py`` serve every filter.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    Func,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from ladder.accounts.models import User
from ladder.bots.models import Bot, BotVersion
from ladder.bots.selectors import with_rating
from ladder.common.exceptions import Conflict, NotFound, PermissionDenied
from ladder.common.logs import LogExcerpt, log_excerpt
from ladder.matches.models import Deal, Match, MatchSeat, Tournament
from ladder.ratings.elo import pair_score
from ladder.tournaments.standings import Outcome, Standing, standings


def seats_shown() -> QuerySet[MatchSeat]:
    """Seats in seat order with what a match shows of their bot and version as plain
    attributes: ``bot_name``, ``bot_kind``, ``bot_owner_id`` (who may read the seat's
    log), ``version_number``.

    Read by a primary-key lookup per seat in the same query: a join would let the
    planner hash every bot and version to show one page of seats, and prefetching
    the bots as objects costs more than the rest of the page.
    """
    bot = Bot.objects.filter(pk=OuterRef("bot_id"))
    version = BotVersion.objects.filter(pk=OuterRef("version_id"))
    return MatchSeat.objects.order_by("seat").annotate(
        bot_name=Subquery(bot.values("name")[:1]),
        bot_kind=Subquery(bot.values("kind")[:1]),
        bot_owner_id=Subquery(bot.values("owner_id")[:1]),
        version_number=Subquery(version.values("number")[:1]),
    )


DEAL_IN_PLAY = "the same deal is still being played in another match: its replay is shown then"
_OPEN = (Match.Status.QUEUED, Match.Status.RUNNING)


def _revealed() -> ExpressionWrapper:
    """SQL for ``deal_revealed``: finished, and no open match deals from the same seed.

    The ``status`` index finds the open matches (few), so this costs little per row.
    """
    twin_open = Match.objects.filter(seed=OuterRef("seed"), status__in=_OPEN)
    return ExpressionWrapper(
        Q(status=Match.Status.FINISHED) & ~Exists(twin_open), output_field=BooleanField()
    )


def deal_revealed(match: Match) -> bool:
    """May anyone see this match's seed, replay and timeline (everything its deal decides)?

    Only once it is finished: the seed determines the whole dealt cave, so before
    the end it would show every hidden card. And only once no queued or running
    match deals from the same seed (a duplicate deal played by other seats): the
    finished twin's seed or replay would show that game's cave too. Matches read
    through this module carry the answer as ``revealed``; others are asked here.
    """
    known = getattr(match, "revealed", None)
    if known is not None:
        return bool(known)
    if match.status != Match.Status.FINISHED:
        return False
    return not Match.objects.filter(seed=match.seed, status__in=_OPEN).exists()


def _with_seats(qs: QuerySet[Match]) -> QuerySet[Match]:
    """Seats as ``seats_shown``; the result and tournament (a primary-key join each);
    the matches of its deal, if any (``deal.matches.all``: one query per page);
    ``revealed`` (``deal_revealed``)."""
    siblings = Match.objects.order_by("deal_rotation").only(
        "id", "deal_id", "deal_rotation", "status"
    )
    return (
        qs.select_related("result", "tournament", "deal")
        .prefetch_related(
            Prefetch("seats", queryset=seats_shown()), Prefetch("deal__matches", queryset=siblings)
        )
        .annotate(revealed=_revealed())
    )


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
class SeatLog:
    """A hosted seat's log as its owner sees it on the match page: the end of it, inline."""

    seat: int
    bot_name: str
    excerpt: LogExcerpt


def match_seat_logs_for_user(
    *, user: User | AnonymousUser, match: Match, cap: int
) -> list[SeatLog]:
    """The logs of ``match``'s hosted seats that ``user`` may read (their own bots' seats;
    staff: every seat), each cut to its last ``cap`` bytes; nothing for anyone else.

    ``match`` comes from ``match_detail`` (its seats carry ``bot_owner_id``): no query
    decides who sees what, and the logs are read from storage only for those seats.
    """
    if not user.is_authenticated:
        return []
    return [
        SeatLog(
            seat=s.seat,
            bot_name=s.bot_name,  # type: ignore[attr-defined]
            excerpt=log_excerpt(s.log.name, cap=cap),
        )
        for s in match.seats.all()
        if s.log.name and (user.is_staff or s.bot_owner_id == user.pk)  # type: ignore[attr-defined]
    ]


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
        mine_rank = mine[match_id]
        if rank is None or mine_rank is None:  # both filtered on rank__isnull=False
            continue
        line = tally.setdefault(opponent, [0, 0, 0, 0])
        line[0] += 1
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


@dataclass(frozen=True)
class ReplayFile:
    match_id: int
    name: str
    sha256: str
    size: int


def match_replay_file(*, match_id: int) -> ReplayFile:
    """Where a match's replay is stored: NotFound when there is no match or no replay
    yet, Conflict while its deal is hidden (``deal_revealed``)."""
    row = (
        Match.objects.filter(pk=match_id)
        .annotate(revealed=_revealed())
        .values_list("replay", "replay_sha256", "replay_size", "status", "revealed")
        .first()
    )
    if row is None or not row[0] or not row[1] or row[3] != Match.Status.FINISHED:
        raise NotFound("this match has no replay")
    if not row[4]:
        raise Conflict(DEAL_IN_PLAY)
    return ReplayFile(match_id=match_id, name=row[0], sha256=row[1], size=row[2])


def _participant_count() -> Coalesce:
    through = Tournament.participants.through.objects.filter(tournament_id=OuterRef("pk"))
    counted = (
        through.order_by().values("tournament_id").annotate(n=Count("pk")).values("n")  # type: ignore[misc]
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


def matches_revealed(qs: QuerySet[Match]) -> QuerySet[Match]:
    """``qs`` narrowed to matches whose deal is revealed (``deal_revealed``, in SQL): what
    may be shown or exported with its seed, replay and timeline."""
    return qs.annotate(revealed=_revealed()).filter(revealed=True)
