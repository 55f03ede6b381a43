"""Leaderboards, rating history, seasons, version lineage and opponents near a rating.

Every read here is served by an index and runs a fixed number of queries:
the leaderboard walks ``botrating_score_idx`` (ladder, score desc, bot), a
bot's history walks the ledger's ``ratingchange_bot_idx`` (bot, ladder, result
desc), and opponents are the nearest entries above and below a rating.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from django.db import connection
from django.db.models import (
    Count,
    F,
    IntegerField,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
    Window,
)
from django.db.models.functions import Coalesce, Lower, RowNumber

from ladder.bots.models import Bot
from ladder.bots.selectors import ranked
from ladder.common import elo
from ladder.common.compiled import SLICE, Compiled
from ladder.common.compiled import marker as compiled_marker
from ladder.common.compiled import text_marker as compiled_text_marker
from ladder.common.elo import Uncertainty
from ladder.common.exceptions import NotFound
from ladder.ladders import ladder_get
from ladder.matches.models import Match, MatchSeat
from ladder.ratings.models import (
    BotRating,
    RatingChange,
    Season,
    SeasonStanding,
    VersionRating,
)
from ladder.ratings.services import provisional_games, provisional_sigma, season_current

__all__ = [
    "LineageRow",
    "SeasonTable",
    "Uncertainty",
    "bot_ladder_positions",
    "bot_ladder_standings",
    "bot_lineage",
    "bot_rating_history",
    "leaderboard_list",
    "leaderboard_size",
    "rating_uncertainty",
    "season_get",
    "season_list",
    "season_standings",
    "season_table",
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
    unsettled = Q(sigma__gt=provisional_sigma()) | Q(games__lt=provisional_games())
    if provisional is True:
        qs = qs.filter(unsettled)
    elif provisional is False:
        qs = qs.exclude(unsettled)
    return qs


def rating_uncertainty(*, rating: int, games: int, sigma: int | None = None) -> Uncertainty:
    """Games played, 95 % interval in points (rating ± 1.96 sigma; without ``sigma``, Elo's
    from the games, see the ``elo`` docstring), provisional flag (fewer than
    ``LADDER_PROVISIONAL_GAMES`` games or sigma above ``LADDER_PROVISIONAL_SIGMA``)."""
    return elo.sigma_uncertainty(
        rating,
        elo.sigma_after(games) if sigma is None else sigma,
        games,
        provisional_above=provisional_sigma(),
        min_games=provisional_games(),
    )


def bot_rating_history(
    *, bot_id: int, limit: int = 200, ladder: str | None = None, season: int | None = None
) -> QuerySet[RatingChange]:
    """The bot's rating changes on ``ladder`` (the ledger, one row per recorded seat: rating
    and sigma before and after) in recording order (oldest first), the latest ``limit`` of
    them, of one ``season`` when given (``result_id`` is the recording sequence). Unrated
    matches (tournaments, comparisons) move no rating: a chart of them would show flat
    stretches and count games the rating never saw."""
    return _history(bot_id, ladder_get(ladder).key, season, limit)


def _history(bot_id: int, key: str, season: int | None, limit: int) -> QuerySet[RatingChange]:
    rows = RatingChange.objects.filter(bot_id=bot_id, ladder=key, rated=True)
    if season is not None:
        rows = rows.filter(season=season)
    latest = rows.order_by("-result_id").values("pk")[:limit]
    return RatingChange.objects.filter(pk__in=latest).order_by("result_id")


HISTORY_FIELDS = (
    "match_id", "result_id", "season", "rank", "rating_before", "rating_after", "sigma_after",
    "recorded_at",
)  # fmt: skip
HISTORY_SHOWN = 200
_HISTORY = {
    True: Compiled(
        lambda b, k, s: _history(b, k, s, HISTORY_SHOWN).values_list(*HISTORY_FIELDS),
        [compiled_marker(1), compiled_text_marker(1), compiled_marker(2)],
    ),
    False: Compiled(
        lambda b, k: _history(b, k, None, HISTORY_SHOWN).values_list(*HISTORY_FIELDS),
        [compiled_marker(1), compiled_text_marker(1)],
    ),
}


def bot_rating_history_rows(
    *, bot_id: int, ladder: str | None = None, season: int | None = None
) -> list[tuple[Any, ...]]:
    """``bot_rating_history``'s latest ``HISTORY_SHOWN`` changes as ``HISTORY_FIELDS``
    tuples (the bot page's chart and table), its SQL compiled once (``Compiled``)."""
    key = ladder_get(ladder).key
    if season is None:
        return _HISTORY[False].rows(bot_id, key)
    return _HISTORY[True].rows(bot_id, key, season)


def season_list(*, ladder: str | None = None) -> list[Season]:
    """The ladder's seasons, newest first (its first is made on first use)."""
    key = ladder_get(ladder).key
    seasons = list(Season.objects.filter(ladder=key).order_by("-number"))
    return seasons or [season_current(ladder=key)]


def season_get(
    *, ladder: str | None = None, number: int | None = None, seasons: list[Season] | None = None
) -> Season:
    """One season of the ladder (default: the current one), or NotFound; from ``seasons``
    (``season_list``) when the caller has read them."""
    seasons = seasons or season_list(ladder=ladder)
    if number is None:
        return seasons[0]
    for season in seasons:
        if season.number == number:
            return season
    raise NotFound(f"ladder {seasons[0].ladder} has no season {number}")


def season_standings(*, season: Season) -> QuerySet[SeasonStanding]:
    """A finished season's final table in its official order (the batch ML fit), with the
    bots and their owners."""
    # The page's bots and owners by primary key (two small queries): joined, the planner
    # hashed every bot of the ladder to show a page of them.
    return (
        SeasonStanding.objects.filter(season=season)
        .prefetch_related("bot__owner")
        .order_by("official_position")
    )


class SeasonTable:
    """A finished season's final table as a paginator reads it (``len``/``count`` and
    slices): each page a range of the (season, position) unique index, then its bots and
    owners by primary key (``season_standings``' prefetch), whatever its depth.

    Positions are unique in a season. Where they run 1..n without a gap (what
    ``season_close`` writes: its highest is the count), the ``k``-th row is at position
    ``k + 1`` and a page is that range alone. ``rerate`` leaves out bots that did not
    play, so its positions may skip numbers: then the row where a page starts is found
    first on the index alone (an index-only range up to it), and the page read from
    there. The page this replaced, an OFFSET over the table joined to bots and owners,
    sorted and joined the season's every row to show 100 of them."""

    ordered = True  # for the paginator

    def __init__(self, season: Season) -> None:
        self.season = season
        self._count: int | None = None
        self._dense: bool | None = None

    def _rows(self) -> QuerySet[SeasonStanding]:
        return SeasonStanding.objects.filter(season=self.season)

    def _measure(self) -> None:
        """Its size and whether its positions run 1..n (they are unique: their highest
        is the count), in one query."""
        found = self._rows().aggregate(n=Count("*"), top=Max("official_position"))
        self._count = int(found["n"])
        self._dense = found["top"] in (None, self._count)

    def count(self) -> int:
        if self._count is None:
            self._measure()
        assert self._count is not None
        return self._count

    def __len__(self) -> int:
        return self.count()

    def dense(self) -> bool:
        """Whether the positions run 1..n (what a season's end writes)."""
        if self._dense is None:
            self._measure()
        assert self._dense is not None
        return self._dense

    def __getitem__(self, index: slice) -> list[SeasonStanding]:
        if not isinstance(index, slice) or index.step not in (None, 1):
            raise TypeError("SeasonTable is read by slices")
        start, stop = index.start or 0, index.stop
        rows = season_standings(season=self.season)
        if start < 0 or stop is None or stop < 0:
            return list(rows[index])
        if stop <= start:
            return []
        if not start:
            return list(rows[:stop])
        if self.dense():
            return list(rows.filter(official_position__gt=start, official_position__lte=stop))
        at = self._rows().order_by("official_position")
        found = list(at.values_list("official_position", flat=True)[start : start + 1])
        if not found:
            return []
        return list(rows.filter(official_position__gte=found[0])[: stop - start])


def season_table(*, season: Season) -> SeasonTable:
    """A finished season's final table for a paginator (``SeasonTable``)."""
    return SeasonTable(season)


@dataclass(frozen=True)
class LineageRow:
    """One version of a bot on a ladder: its own rating entry, how far its rating moved from
    the version before it (``change``: None for the first), and its record against that
    version in matches where both played (ahead, behind, level: always 0, see
    ``bot_lineage``; kept for the API's old clients)."""

    number: int
    version_id: int
    rating: int
    sigma: int
    games: int
    wins: int
    ahead: int
    behind: int
    level: int
    change: int | None


def bot_lineage(*, bot_id: int, ladder: str | None = None) -> list[LineageRow]:
    """The bot's rated versions on ``ladder``, newest first, each with its own rating entry
    and its record against the previous rated version (one query, whatever the bot's
    history).

    That record counts the recorded matches where both versions sat, and no match seats
    two versions of one bot: a seat's version is its bot's (``match_create`` checks a
    pinned one) and a bot has one seat a match (``matchseat_match_bot_unique``); version
    comparisons play each version in a match of its own. So it is nothing ahead, behind
    or level, answered without reading the seats of every version (about 11,000 pages
    of them for a bot with 3,700 seats over ten versions). Matches that seat two
    versions of a bot would need that record kept as counters per (version, previous
    version) pair, added to in the transaction that records such a match.

    What tells an author whether a version is better than the one before is how far
    its rating moved from the entry it was seeded with (``change``), and a version
    comparison (both versions against the same opponents)."""
    key = ladder_get(ladder).key
    entries = (
        VersionRating.objects.filter(bot_id=bot_id, ladder=key)
        .select_related("version")
        .only("version__number", "version_id", "rating", "sigma", "games", "wins")
        .order_by("-version__number")
    )
    rows = list(entries)
    return [
        LineageRow(
            number=e.version.number, version_id=e.version_id, rating=e.rating,
            sigma=e.sigma, games=e.games, wins=e.wins, ahead=0, behind=0, level=0,
            change=e.rating - rows[i + 1].rating if i + 1 < len(rows) else None,
        )
        for i, e in enumerate(rows)
    ]  # fmt: skip


# --- the web leaderboard: search, sort, and per-page extras in one query each -------

LEADERBOARD_SORTS: dict[str, tuple[Any, ...]] = {
    "rank": (F("score").desc(), "id"),
    "-rank": (F("score").asc(), F("id").desc()),
    "name": (Lower("name"), "id"),
    "-name": (Lower("name").desc(), F("id").desc()),
    "owner": (Lower("owner__username"), Lower("name"), "id"),
    "-owner": (Lower("owner__username").desc(), Lower("name").desc(), F("id").desc()),
    "games": ("games", F("score").desc(), "id"),
    "-games": (F("games").desc(), F("score").desc(), "id"),
}
"""Orderings the leaderboard may be sorted by; every one ends in a unique tie-break."""


def leaderboard_search(
    *,
    kind: str = "",
    query: str = "",
    sort: str = "rank",
    ladder: str | None = None,
    include_inactive: bool = False,
) -> QuerySet[Bot]:
    """The board (``leaderboard_list``) narrowed to bots whose name or owner contains ``query``.

    ``include_inactive`` keeps suspended bots in (the site shows them, marked, without a
    position: they are off the board the matchmaker and the positions count).
    """
    qs = leaderboard_list(kind=kind, ladder=ladder, include_inactive=include_inactive)
    query = query.strip()
    if query:
        qs = qs.filter(Q(name__icontains=query) | Q(owner__username__icontains=query))
    # Only what a line of the site's board shows (``web.rows.board_row``): a page of 50
    # bots and their owners built from every column cost a third more.
    qs = qs.only(*BOARD_LINE_FIELDS)
    return qs.order_by(*LEADERBOARD_SORTS.get(sort, LEADERBOARD_SORTS["rank"]))


BOARD_LINE_FIELDS = ("name", "kind", "is_active", "suspended_reason", "owner__username")
"""The bot's and its owner's columns a leaderboard line shows (with the rating's)."""


def leaderboard_size(*, ladder: str | None = None, include_inactive: bool = True) -> int:
    """How many bots the unfiltered board lists (``leaderboard_search`` with
    ``include_inactive``, as the site shows it; without, the REST and gRPC board): the
    ladder's entries less those of the bots off it, counted on the entries' index with
    the (few) bots off it set aside, not a join of every bot."""
    rows = _BOARD_SIZE[include_inactive].rows(ladder_get(ladder).key)
    return int(rows[0][0]) if rows else 0


def _counted(entries: QuerySet[BotRating]) -> QuerySet[Any, Any]:
    """``entries`` counted in one row (none when there are none), on the index alone."""
    return entries.order_by().values("ladder").annotate(n=Count("*")).values_list("n")


_BOARD_SIZE = {
    inactive: Compiled(
        lambda key, inactive=inactive: _counted(
            _board_entries(ladder=key, include_inactive=inactive)
        ),
        [compiled_text_marker(1)],
    )
    for inactive in (True, False)
}


def leaderboard_positions(
    *,
    bot_ids: Sequence[int],
    kind: str = "",
    ladder: str | None = None,
    lowest_score: int | None = None,
) -> dict[int, int]:
    """Each bot's position on the board of ``kind``, in ``leaderboard_list``'s order.

    Bots off the board (suspended, retired) are absent. One query for any number
    of bots: the board is numbered once (a window over the rating index) and
    only the asked rows are read from it, so a search result or another sort
    order still shows each bot's real position. ``lowest_score``, the lowest score
    of the asked bots (they carry it), numbers only the entries at or above it:
    every entry ahead of an asked bot is among them, so the positions are the
    same, and the board's first pages read a page of entries instead of all.
    """
    ids = [int(i) for i in bot_ids]
    if not ids:
        return {}
    key = ladder_get(ladder).key
    # The board's entries numbered on the (ladder, score, bot) index alone (the few bots
    # off it set aside by id), not the board joined with its bots: 9 -> 5 ms of SQL for
    # the whole 10,000-bot board; its SQL compiled once for each shape.
    shape = (bool(kind), lowest_score is not None)
    args: list[Any] = [key]
    if kind:
        args.append(kind)
    if lowest_score is not None:
        args.append(lowest_score)
    sql, params = _NUMBERED[shape].sql_params(*args)
    marks = ", ".join(["%s"] * len(ids))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT board.bot_id, board.position FROM ({sql}) board"
            f" WHERE board.bot_id IN ({marks})",
            [*params, *ids],
        )
        return {pk: position for pk, position in cursor.fetchall()}


def _numbered(kind: bool, lowest: bool) -> Compiled:
    markers: list[Any] = [compiled_text_marker(1)]
    if kind:
        markers.append(compiled_text_marker(2))
    if lowest:
        markers.append(compiled_marker(1))

    def build(key: str, *rest: Any) -> QuerySet[Any, Any]:
        given = iter(rest)
        entries = _board_entries(ladder=key, kind=next(given) if kind else "")
        if lowest:
            entries = entries.filter(score__gte=next(given))
        position = Window(RowNumber(), order_by=[F("score").desc(), F("bot_id").asc()])
        return entries.annotate(position=position).order_by().values_list("bot_id", "position")

    return Compiled(build, markers)


_NUMBERED = {(kind, lowest): _numbered(kind, lowest) for kind in (False, True)
             for lowest in (False, True)}  # fmt: skip


def _board_entries(
    *, ladder: str, kind: str = "", include_inactive: bool = False
) -> QuerySet[BotRating]:
    """The rating entries of ``leaderboard_list``'s board (of ``kind``; with the suspended
    bots' when ``include_inactive``) as the (ladder, score, bot) index holds them: the
    (few) bots off that board are set aside by id, not joined entry by entry."""
    off = (
        Q(retired_at__isnull=False)
        if include_inactive
        else Q(is_active=False) | Q(retired_at__isnull=False)
    )
    entries = BotRating.objects.filter(ladder=ladder).exclude(
        bot_id__in=Bot.objects.filter(off).values("pk")
    )
    if kind:
        entries = entries.filter(bot_id__in=Bot.objects.filter(kind=kind).values("pk"))
    return entries


def leaderboard_row_at(
    offset: int, *, ladder: str | None = None, include_inactive: bool = False
) -> tuple[int, int] | None:
    """(score, bot id) of the ``offset``-th entry (1-based) of the unfiltered board in its
    order, or None past its end: where a page by number starts, read on the score index
    (an index-only range of ``offset`` entries) instead of an OFFSET over the board
    joined with its bots and owners."""
    if offset < 1:
        return None
    found = _ROW_AT[include_inactive].rows(ladder_get(ladder).key, offset=offset - 1, limit=1)
    return (found[0][0], found[0][1]) if found else None


def _row_at(key: str, include_inactive: bool) -> QuerySet[Any, Any]:
    entries = _board_entries(ladder=key, include_inactive=include_inactive)
    rows = entries.order_by("-score", "bot_id").values_list("score", "bot_id")
    return rows[SLICE[0] : SLICE[0] + SLICE[1]]


_ROW_AT = {
    inactive: Compiled(partial(_row_at, include_inactive=inactive), [compiled_text_marker(1)],
                       sliced=True)
    for inactive in (True, False)
}  # fmt: skip


def leaderboard_positions_from(
    bots: Sequence[Bot], *, kind: str = "", ladder: str | None = None
) -> dict[int, int]:
    """Positions on the board of ``kind`` (as ``leaderboard_positions``) of ``bots``, a run
    of consecutive lines of the site's board in its own order (suspended bots included,
    as it lists them; they hold no position): one count of the board's entries ahead of
    the first, then numbered down the run. The count is an index range ending at the
    run, not a window over it: a deep page costs a few milliseconds, not ten."""
    if not bots:
        return {}
    first = bots[0]
    score: int = first.score  # type: ignore[attr-defined]
    key = ladder_get(ladder).key
    args = (key, score, first.pk, kind) if kind else (key, score, first.pk)
    counted = _AHEAD[bool(kind)].rows(*args)
    ahead = int(counted[0][0]) if counted else 0
    positions = {}
    for bot in bots:
        if bot.is_active:  # a suspended bot is listed, off the board
            ahead += 1
            positions[bot.pk] = ahead
    return positions


def _ahead(key: str, score: int, bot_id: int, kind: str = "") -> QuerySet[Any, Any]:
    entries = _board_entries(ladder=key, kind=kind).filter(score__gte=score)
    return _counted(entries.filter(Q(score__gt=score) | Q(bot_id__lt=bot_id)))


_AHEAD = {
    False: Compiled(_ahead, [compiled_text_marker(1), compiled_marker(1), compiled_marker(2)]),
    True: Compiled(
        _ahead,
        [compiled_text_marker(1), compiled_marker(1), compiled_marker(2), compiled_text_marker(2)],
    ),
}


def bot_ladder_positions(*, bot_id: int) -> dict[str, int]:
    """The bot's position on each ladder's board (``leaderboard_list`` without filters), by
    ladder key; empty when the bot is off the boards (suspended or retired).

    One query for every ladder: each position is one plus the board entries ahead of
    the bot's (higher score, or equal and an older bot), counted on the board index.
    """
    board = BotRating.objects.filter(bot__is_active=True, bot__retired_at__isnull=True)
    ahead = (
        board.filter(ladder=OuterRef("ladder"))
        .filter(Q(score__gt=OuterRef("score")) | Q(score=OuterRef("score"), bot_id__lt=bot_id))
        .order_by()
        .values("ladder")
        .annotate(n=Count("pk"))
        .values("n")
    )
    rows = board.filter(bot_id=bot_id).annotate(
        ahead=Coalesce(Subquery(ahead, output_field=IntegerField()), Value(0))
    )
    return {ladder: n + 1 for ladder, n in rows.values_list("ladder", "ahead")}


STANDING_FIELDS = ("pk", "bot_id", "ladder", "rating", "sigma", "score", "games", "wins")


def _standings(bot_id: int) -> QuerySet[Any, Any]:
    """A bot's rating entries, each with the count of the board entries ahead of it: on the
    (ladder, score, bot) index alone, the (few) entries of suspended and retired bots set
    aside by id (``bot_off_board_idx``), no join of the board with its bots."""
    off_board = Bot.objects.filter(Q(is_active=False) | Q(retired_at__isnull=False))
    ahead = (
        BotRating.objects.filter(ladder=OuterRef("ladder"), score__gte=OuterRef("score"))
        .filter(Q(score__gt=OuterRef("score")) | Q(bot_id__lt=bot_id))
        .exclude(bot_id__in=off_board.values("pk"))
        .order_by()
        .values("ladder")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return (
        BotRating.objects.filter(bot_id=bot_id)
        .order_by("ladder")
        .annotate(ahead=Coalesce(Subquery(ahead, output_field=IntegerField()), Value(0)))
        .values_list(*STANDING_FIELDS, "ahead")
    )


_STANDINGS = Compiled(_standings, [compiled_marker(1)])


def bot_ladder_standings(*, bot: Bot) -> tuple[list[BotRating], dict[str, int]]:
    """The bot's rating entries (by ladder key) and its position on each ladder's board
    (``bot_ladder_positions``: none when it is off the boards), in one query: the
    entries carry the count of the board entries ahead of them (``_standings``)."""
    entries, ahead = [], {}
    for *values, n in _STANDINGS.rows(bot.pk):
        entry = BotRating(**dict(zip(("id", *STANDING_FIELDS[1:]), values, strict=True)))
        entries.append(entry)
        ahead[entry.ladder] = n + 1
    if not bot.is_active or bot.retired_at is not None:
        return entries, {}
    return entries, ahead


def _recorded_seats() -> QuerySet[MatchSeat]:
    """Seats of recorded results (``rating_after`` is set exactly then): no join needed."""
    return MatchSeat.objects.filter(rating_after__isnull=False)


def bot_rating_trends(
    *, bot_ids: Sequence[int], points: int = 20, ladder: str | None = None
) -> dict[int, list[int]]:
    """Each bot's rating (hundredths) on ``ladder`` after its last ``points`` recorded matches
    there, oldest first.

    For the sparklines of a page of bots, in one query. On PostgreSQL a LATERAL
    join reads only each bot's latest seats (an index range per bot, one small
    plan); elsewhere a window over the bots' seats. Only rated matches count (as in
    ``bot_rating_history``): an unrated one moves no rating; the order is the matches'
    (creation) order.
    """
    ids = [int(pk) for pk in dict.fromkeys(bot_ids)]
    if not ids:
        return {}
    key = ladder_get(ladder).key
    if connection.vendor == "postgresql":
        seats = connection.ops.quote_name(MatchSeat._meta.db_table)
        matches = connection.ops.quote_name(Match._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT s.bot_id, s.match_id, s.rating_after FROM unnest(%s::bigint[]) AS b(id)"
                " CROSS JOIN LATERAL (SELECT t.bot_id, t.match_id, t.rating_after"
                f" FROM {seats} t JOIN {matches} m ON m.id = t.match_id"
                " WHERE t.bot_id = b.id AND t.rating_after IS NOT NULL AND m.ladder = %s"
                " AND m.rated"
                " ORDER BY t.match_id DESC LIMIT %s) s",
                [ids, key, points],
            )
            rows = cursor.fetchall()
    else:
        rows = list(
            _recorded_seats()
            .filter(bot_id__in=ids, match__ladder=key, match__rated=True)
            .annotate(
                back=Window(RowNumber(), partition_by=[F("bot_id")], order_by=F("match_id").desc())
            )
            .filter(back__lte=points)
            .values_list("bot_id", "match_id", "rating_after")
        )
    trends: dict[int, list[int]] = {pk: [] for pk in ids}
    for bot_id, _, rating in sorted(rows, key=lambda r: (r[0], r[1])):
        trends[bot_id].append(rating)
    return trends
