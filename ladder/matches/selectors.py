"""Read-side queries for matches, their seats, logs and replays.

Lists come back newest first (``-id``) for keyset pagination, with their seats,
bots, versions and result fetched in a fixed number of queries whatever the
page or the data size; the indexes in ``models.py`` serve every filter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
)

from ladder.accounts.models import User
from ladder.bots.models import Bot, BotVersion
from ladder.common.compiled import SLICE, Compiled, marker, text_marker
from ladder.common.exceptions import Conflict, NotFound, PermissionDenied
from ladder.common.logs import LogExcerpt, log_excerpt
from ladder.matches.models import Match, MatchSeat, OpponentTally


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
NOT_FINISHED = "its seed and replay are shown once it has finished"
_OPEN = (Match.Status.QUEUED, Match.Status.RUNNING)


def _revealed(via: str = "") -> ExpressionWrapper:
    """SQL for ``match_reveal``'s rule: finished, and no open match deals from the same seed
    (of the match the rows are, or, with ``via`` such as ``"match__"``, the one they name).

    The ``status`` index finds the open matches (few), so this costs little per row.
    """
    twin_open = Match.objects.filter(seed=OuterRef(f"{via}seed"), status__in=_OPEN)
    return ExpressionWrapper(
        Q(**{f"{via}status": Match.Status.FINISHED}) & ~Exists(twin_open),
        output_field=BooleanField(),
    )


@dataclass(frozen=True)
class ReplayFile:
    match_id: int
    name: str
    sha256: str
    size: int


@dataclass(frozen=True)
class MatchReveal:
    """What anyone may see of the cave a match was dealt, on any interface.

    Its seed determines the whole dealt cave, and its replay (and the viewer's
    timeline, built from the replay) shows every card of it. So all of it is
    shown only once the match is finished and no queued or running match deals
    from the same seed (a duplicate deal's other rotations, played by other
    seats, would see their cave); before that, none of it, to anyone, staff
    included. ``hidden`` says why, for whoever asked; ``stored`` says whether a
    replay exists at all (not a secret: the page says one is coming).
    """

    match_id: int
    status: str
    revealed: bool
    seed: int | None  # None while hidden
    replay: ReplayFile | None  # None while hidden, or when none is stored
    stored: bool
    hidden: str  # "" when revealed


def match_reveal(match: Match) -> MatchReveal:
    """The one rule that hides a match's seed, replay and timeline until its deal is done.

    Every interface that shows a match (REST, gRPC, pages, viewer, admin) renders
    this, never the match's own ``seed`` / ``replay*`` fields. Matches read
    through this module carry the answer as ``revealed`` (no query); others are
    asked here (one index read).
    """
    known = getattr(match, "revealed", None)
    if known is not None:
        revealed = bool(known)
    elif match.status != Match.Status.FINISHED:
        revealed = False
    else:
        revealed = not Match.objects.filter(seed=match.seed, status__in=_OPEN).exists()
    stored = bool(match.replay_sha256 and match.replay.name)
    hidden = ""
    if not revealed:
        hidden = DEAL_IN_PLAY if match.status == Match.Status.FINISHED else NOT_FINISHED
    replay = None
    if revealed and stored:
        replay = ReplayFile(
            match_id=match.pk,
            name=match.replay.name,
            sha256=match.replay_sha256,
            size=match.replay_size,
        )
    return MatchReveal(
        match_id=match.pk,
        status=match.status,
        revealed=revealed,
        seed=match.seed if revealed else None,
        replay=replay,
        stored=stored,
        hidden=hidden,
    )


def match_reveal_get(*, match_id: int) -> MatchReveal:
    """``match_reveal`` of a match by id (one query), or NotFound."""
    match = (
        Match.objects.filter(pk=match_id)
        .annotate(revealed=_revealed())
        .only("pk", "status", "seed", "replay", "replay_sha256", "replay_size")
        .first()
    )
    if match is None:
        raise NotFound("no such match")
    return match_reveal(match)


def deal_siblings() -> Prefetch[Any, Any, Any]:
    """The matches of a match's deal (``deal.matches.all``), by rotation: one query a page."""
    siblings = Match.objects.order_by("deal_rotation").only(
        "id", "deal_id", "deal_rotation", "status"
    )
    return Prefetch("deal__matches", queryset=siblings)


def _with_seats(qs: QuerySet[Match], *, seats: bool = True) -> QuerySet[Match]:
    """Seats as ``seats_shown`` (unless ``seats`` is false: ``with_seat_rows`` gives a
    page its seats as rows); the result and tournament (a primary-key join each);
    the matches of its deal, if any (``deal.matches.all``: one query per page);
    ``revealed`` (``match_reveal`` answers without a query)."""
    prefetch: list[Prefetch[Any, Any, Any]] = [deal_siblings()]
    if seats:
        prefetch.insert(0, Prefetch("seats", queryset=seats_shown()))
    return (
        qs.select_related("result", "tournament", "deal")
        .prefetch_related(*prefetch)
        .annotate(revealed=_revealed())
    )


@dataclass(frozen=True, slots=True)
class SeatShown:
    """A seat as the REST and gRPC lists of matches show it: what ``seats_shown`` gives a
    seat (its bot's name, kind and owner, its version's number) as a plain row. A
    page's 150 seats cost more as model instances than the rest of the page did."""

    match_id: int
    seat: int
    bot_id: int
    version_id: int
    rank: int | None
    score: int | None
    faults: int
    ended: str
    forfeit_reason: str
    rating_before: int | None
    rating_after: int | None
    bot_name: str
    bot_kind: str
    bot_owner_id: int
    version_number: int

    @property
    def rating_delta(self) -> int | None:
        if self.rating_before is None or self.rating_after is None:
            return None
        return self.rating_after - self.rating_before


SEAT_SHOWN_FIELDS = tuple(SeatShown.__dataclass_fields__)


def _seats_shown_of(*match_ids: int) -> QuerySet[Any, Any]:
    return (
        seats_shown()
        .filter(match_id__in=match_ids)
        .order_by("match_id", "seat")
        .values_list(*SEAT_SHOWN_FIELDS)
    )


_SEATS_SHOWN_OF: dict[int, Compiled] = {}


def with_seat_rows(matches: list[Match]) -> list[Match]:
    """``matches`` (read with ``match_list(..., seats=False)``) given their seats as
    ``SeatShown`` rows where ``match.seats.all()`` finds prefetched seats: one query,
    compiled once for each number of matches (a page size or less)."""
    ids = [m.pk for m in matches]
    by_match: dict[int, list[SeatShown]] = {pk: [] for pk in ids}
    if ids:
        n = len(ids)
        if n > 200:
            rows: list[tuple[Any, ...]] = list(_seats_shown_of(*ids))
        else:
            query = _SEATS_SHOWN_OF.get(n) or _SEATS_SHOWN_OF.setdefault(
                n, Compiled(_seats_shown_of, [marker(i) for i in range(n)])
            )
            rows = query.rows(*ids)
        for row in rows:
            by_match[row[0]].append(SeatShown(*row))
    for m in matches:
        cache = m.__dict__.setdefault("_prefetched_objects_cache", {})
        cache["seats"] = by_match[m.pk]
    return matches


def _filtered(
    *, bot_id: int | None, status: str, tournament_id: int | None, ladder: str
) -> QuerySet[Match]:
    qs = Match.objects.all()
    if bot_id is not None:
        qs = qs.filter(pk__in=MatchSeat.objects.filter(bot_id=bot_id).values("match_id"))
    if status:
        qs = qs.filter(status=status)
    if tournament_id is not None:
        qs = qs.filter(tournament_id=tournament_id)
    if ladder:
        qs = qs.filter(ladder=ladder)
    return qs


def match_list(
    *,
    bot_id: int | None = None,
    status: str = "",
    tournament_id: int | None = None,
    ladder: str = "",
    seats: bool = True,
) -> QuerySet[Match]:
    """Matches newest first, filterable by bot, status, tournament and ladder key; without
    their seats when ``seats`` is false (a page of them then reads its seats as rows:
    ``with_seat_rows``)."""
    qs = _filtered(bot_id=bot_id, status=status, tournament_id=tournament_id, ladder=ladder)
    return _with_seats(qs, seats=seats).order_by("-id")


ROW_FIELDS = (
    "id", "status", "ladder", "rated", "tournament_id", "tournament__name", "deal_id",
    "deal_rotation", "replay_sha256", "created_at",
)  # fmt: skip
"""What a line of a list of matches on the site shows (``web/includes/match_rows.html``)."""


def match_rows_list(
    *,
    bot_id: int | None = None,
    status: str = "",
    tournament_id: int | None = None,
    ladder: str = "",
) -> QuerySet[Match]:
    """``match_list`` as the site's lists show it: the fields of ``ROW_FIELDS`` and the
    seats (``seats_shown``), without the results, deals and reveal rule a line does not
    show (a result's JSON decoded per line cost more than the line)."""
    qs = _filtered(bot_id=bot_id, status=status, tournament_id=tournament_id, ladder=ladder)
    return (
        qs.select_related("tournament")
        .only(*ROW_FIELDS)
        .prefetch_related(Prefetch("seats", queryset=seats_shown()))
        .order_by("-id")
    )


@dataclass(frozen=True)
class SeatLine:
    """A seat as a line of a list of matches shows it (``web.rows.match_row``)."""

    bot_id: int
    bot_name: str
    rank: int | None
    rating_delta: int | None


@dataclass(frozen=True)
class TournamentName:
    name: str


@dataclass(frozen=True)
class MatchLine:
    """A match as a line of a list shows it (``ROW_FIELDS`` and its seats), read as plain
    rows: what ``match_rows_list`` gives, without a model instance per match and seat."""

    pk: int
    status: str
    ladder: str
    rated: bool
    tournament_id: int | None
    tournament: TournamentName | None
    deal_id: int | None
    deal_rotation: int | None
    replay_sha256: str
    created_at: Any
    seat_lines: list[SeatLine]


LINE_FIELDS = (
    "id", "status", "ladder", "rated", "tournament_id", "tournament__name", "deal_id",
    "deal_rotation", "replay_sha256", "created_at",
)  # fmt: skip
"""``ROW_FIELDS`` as plain values, in the order ``_match_lines`` reads them."""


def _seats_of(*match_ids: int) -> QuerySet[Any, Any]:
    return (
        MatchSeat.objects.filter(match_id__in=match_ids)
        .order_by("match_id", "seat")
        .values_list("match_id", "bot_id", "bot__name", "rank", "rating_before", "rating_after")
    )


_SEATS_OF: dict[int, Compiled] = {}
"""``_seats_of`` compiled for each number of matches a list shows (a page size or less)."""


def _seat_lines(match_ids: list[int]) -> list[tuple[Any, ...]]:
    """The seats of those matches in match and seat order, with their bots' names."""
    n = len(match_ids)
    if n > 200:  # longer than any page: not worth a plan of its own
        return list(_seats_of(*match_ids))
    query = _SEATS_OF.get(n)
    if query is None:
        query = _SEATS_OF.setdefault(n, Compiled(_seats_of, [marker(i) for i in range(n)]))
    return query.rows(*match_ids)


def _match_lines(rows: list[tuple[Any, ...]]) -> list[MatchLine]:
    """``MatchLine``s of matches read as ``LINE_FIELDS`` tuples, with their seats (one
    query: the seats of those matches, each with its bot's name by primary key)."""
    seats: dict[int, list[SeatLine]] = {row[0]: [] for row in rows}
    if seats:
        for match_id, bot_id, name, rank, before, after in _seat_lines(list(seats)):
            delta = None if before is None or after is None else after - before
            seats[match_id].append(SeatLine(bot_id, name, rank, delta))
    return [
        MatchLine(
            pk=pk, status=status, ladder=ladder, rated=rated, tournament_id=tid,
            tournament=TournamentName(tname) if tid is not None else None,
            deal_id=deal_id, deal_rotation=rotation, replay_sha256=sha or "",
            created_at=created, seat_lines=seats[pk],
        )
        for pk, status, ladder, rated, tid, tname, deal_id, rotation, sha, created in rows
    ]  # fmt: skip


class MatchLines:
    """A list of matches as ``MatchLine``s (what ``match_rows_list`` shows, as plain
    rows: no model instance per match and seat), read when sliced: two queries, the
    matches' ``LINE_FIELDS`` and their seats. ``len`` counts the list.

    With ``seek`` (two compiled queries: the id of the list's ``n``-th match, and a page
    after a given id), a slice that does not start at the top finds its start on the
    list's index first (an index-only range, no match row read) and reads its page
    from there, instead of an OFFSET that joins and discards every match ahead of it:
    a deep page by number costs its rows and that range, the same rows as the OFFSET."""

    ordered = True  # for the paginator: ``matches`` is ordered

    def __init__(
        self,
        matches: QuerySet[Match],
        compiled: Compiled | None = None,
        args: tuple = (),
        seek: tuple[Compiled, Compiled] | None = None,
    ) -> None:
        self.matches = matches
        self.compiled, self.args, self.seek = compiled, args, seek

    def __len__(self) -> int:
        return self.count()

    def count(self) -> int:
        return self.matches.count()

    def __getitem__(self, index: slice) -> list[MatchLine]:
        if not isinstance(index, slice):
            raise TypeError("MatchLines is read by slices")
        start, stop = index.start or 0, index.stop
        if self.compiled is None or stop is None or index.step not in (None, 1) or start < 0:
            return _match_lines(list(self.matches.values_list(*LINE_FIELDS)[index]))
        if stop <= start:
            return []
        if start and self.seek is not None:
            return _sought(self.seek, self.args, start, stop - start)
        return _match_lines(self.compiled.rows(*self.args, offset=start, limit=stop - start))


def _sought(
    seek: tuple[Compiled, Compiled], args: tuple, start: int, limit: int
) -> list[MatchLine]:
    """``limit`` lines from the ``start``-th (0-based, more than 0) of a list: the id of the
    match before them read on the list's index, then the page after it."""
    row_at, after = seek
    found = row_at.rows(*args, offset=start - 1, limit=1)
    if not found:
        return []
    return _match_lines(after.rows(*args, found[0][0], limit=limit))


def match_lines(
    *,
    status: str = "",
    tournament_id: int | None = None,
    ladder: str = "",
    oldest_first: bool = False,
) -> MatchLines:
    """``match_rows_list`` as ``MatchLines`` (newest first, or oldest: the queue); its pages'
    SQL compiled once for each combination of filters (``Compiled``), a deep page sought
    on the filter's (column, id) index (``MatchLines``)."""
    qs = _filtered(bot_id=None, status=status, tournament_id=tournament_id, ladder=ladder)
    shape = (bool(status), tournament_id is not None, bool(ladder), oldest_first)
    compiled = _LINES.get(shape)
    if compiled is None:
        compiled = _LINES.setdefault(shape, _lines_compiled(*shape))
    seek = _SEEK.get(shape)
    if seek is None:
        seek = _SEEK.setdefault(
            shape, (_lines_compiled(*shape, ids=True), _lines_compiled(*shape, after=True))
        )
    args = tuple(
        a for a, given in zip((status, tournament_id, ladder), shape[:3], strict=True) if given
    )
    return MatchLines(qs.order_by("id" if oldest_first else "-id"), compiled, args, seek)


_LINES: dict[tuple[bool, bool, bool, bool], Compiled] = {}
_SEEK: dict[tuple[bool, bool, bool, bool], tuple[Compiled, Compiled]] = {}


def _lines_compiled(
    status: bool,
    tournament: bool,
    ladder: bool,
    oldest_first: bool,
    *,
    ids: bool = False,
    after: bool = False,
) -> Compiled:
    """``match_lines``' page query for one combination of filters, its arguments in the
    order status, tournament, ladder (those given); with ``ids``, only the matches' ids
    (where a page starts: an index-only range); with ``after``, the page after the match
    whose id is the last argument."""
    markers = [m for m, given in ((text_marker(1), status), (marker(1), tournament),
                                  (text_marker(2), ladder), (marker(2), after))
               if given]  # fmt: skip

    def build(*args: Any) -> QuerySet[Any, Any]:
        given = iter(args)
        qs = _filtered(
            bot_id=None,
            status=next(given) if status else "",
            tournament_id=next(given) if tournament else None,
            ladder=next(given) if ladder else "",
        )
        if after:
            qs = qs.filter(**{"id__gt" if oldest_first else "id__lt": next(given)})
        ordered = qs.order_by("id" if oldest_first else "-id")
        rows = ordered.values_list("id") if ids else ordered.values_list(*LINE_FIELDS)
        return rows[SLICE[0] : SLICE[0] + SLICE[1]]

    return Compiled(build, markers, sliced=True)


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

    Most met first, ties by opponent id (the older bot first). Read from the
    counters kept when results are recorded (``ladder.matches.opponents``): one
    index range of the rows shown, whatever the bot's history.
    """
    if limit is None:
        return [OpponentRecord(*row) for row in _opponents(bot_id)]
    return [OpponentRecord(*row) for row in _OPPONENTS.rows(bot_id, limit=limit)]


def _opponents(bot_id: int) -> QuerySet[Any, Any]:
    return (
        OpponentTally.objects.filter(bot_id=bot_id, matches__gt=0)
        .order_by("-matches", "opponent_id")
        .values_list("opponent_id", "opponent__name", "matches", "ahead", "behind", "level")
    )


_OPPONENTS = Compiled(
    lambda b: _opponents(b)[SLICE[0] : SLICE[0] + SLICE[1]], [marker(1)], sliced=True
)


def match_replay_file(*, match_id: int) -> ReplayFile:
    """Where a match's replay is stored (``match_reveal``): NotFound when there is no
    match or no replay yet, Conflict while another match still plays its deal."""
    reveal = match_reveal_get(match_id=match_id)
    if reveal.replay is not None:
        return reveal.replay
    if reveal.stored and reveal.hidden == DEAL_IN_PLAY:
        raise Conflict(DEAL_IN_PLAY)
    raise NotFound("this match has no replay")


def matches_revealed(qs: QuerySet[Match]) -> QuerySet[Match]:
    """``qs`` narrowed to matches ``match_reveal`` reveals (its rule in SQL: finished, no
    open match deals from the same seed): what may be exported with seed and replay."""
    return qs.annotate(revealed=_revealed()).filter(revealed=True)


def ladder_pulse() -> str:
    """A short token that changes whenever a match is queued, starts, or ends (three queries).

    Pages that update themselves poll it and fetch themselves again only when it
    changes (``ladder/web/live.py``); every part is an indexed count or maximum.
    """
    from django.db.models import Max

    from ladder.matches.models import MatchResult

    open_counts = dict(
        Match.objects.filter(status__in=[Match.Status.QUEUED, Match.Status.RUNNING])
        .order_by()
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    newest = Match.objects.aggregate(m=Max("id"))["m"] or 0
    recorded = MatchResult.objects.aggregate(r=Max("id"))["r"] or 0
    queued = open_counts.get(Match.Status.QUEUED, 0)
    running = open_counts.get(Match.Status.RUNNING, 0)
    return f"{newest}.{recorded}.{queued}.{running}"
