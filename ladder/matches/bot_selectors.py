"""Reads of one bot's matches: every list of them is a range of its seats' index.

A bot's matches are found from its seats, on ``matchseat_bot_match_idx`` (bot,
match desc), never by walking the matches: a filter "matches with a seat of this
bot" ordered by match id let PostgreSQL walk the match table backwards from the
cursor and probe each match for the bot's seat (a merge join), so a page of a
busy bot read thousands of other bots' matches, and more the longer the ladder's
history. Here a page is:

- the site's lines (``BotMatchLines``): the page's seats joined to their matches,
  a deep page by number found first on the index alone (``_sought``);
- the REST list (``bot_match_seats`` paginated by its cursor, then
  ``matches_of_seats``): the page's seats read as a range of the index from the
  cursor, each joined to its match by primary key, in one query;
- the gRPC list (``bot_match_page``): the same range, from a page token.

Each costs the page and, for a deep page by number, the bot's own seats above it:
never the ladder's other matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import Count, QuerySet, prefetch_related_objects

from ladder.common.compiled import SLICE, Compiled, marker
from ladder.matches.models import Match, MatchSeat
from ladder.matches.selectors import (
    LINE_FIELDS,
    MatchLine,
    MatchLines,
    _match_lines,
    _revealed,
    _sought,
    deal_siblings,
    with_seat_rows,
)

__all__ = [
    "BotMatchLines",
    "bot_match_count",
    "bot_match_page",
    "bot_match_seats",
    "matches_of_seats",
]


def _bot_lines(bot_id: int, before: int | None = None) -> QuerySet[Any, Any]:
    fields = ["match_id", *(f"match__{f}" for f in LINE_FIELDS[1:])]
    seats = MatchSeat.objects.filter(bot_id=bot_id)
    if before is not None:
        seats = seats.filter(match_id__lt=before)
    return seats.order_by("-match_id").values_list(*fields)[SLICE[0] : SLICE[0] + SLICE[1]]


def _bot_match_ids(bot_id: int) -> QuerySet[Any, Any]:
    seats = MatchSeat.objects.filter(bot_id=bot_id).order_by("-match_id").values_list("match_id")
    return seats[SLICE[0] : SLICE[0] + SLICE[1]]


_BOT_LINES = Compiled(_bot_lines, [marker(1)], sliced=True)
"""A bot's seats newest first with their matches' ``LINE_FIELDS``, a page at a time."""

_BOT_SEEK = (
    Compiled(_bot_match_ids, [marker(1)], sliced=True),
    Compiled(_bot_lines, [marker(1), marker(2)], sliced=True),
)
"""Where a deep page of a bot's matches starts (on the (bot, match) index alone), and the
page after it."""


class BotMatchLines(MatchLines):
    """A bot's matches newest first as ``MatchLine``s: each slice reads the bot's seats on
    the (bot, match) index joined to their matches, then those matches' seats (a deep
    one sought on that index first, as ``MatchLines`` seeks); the count is
    ``bot_match_count`` (an index count of its seats)."""

    def __init__(self, bot_id: int) -> None:
        self.bot_id = bot_id

    def count(self) -> int:
        return bot_match_count(bot_id=self.bot_id)

    def __getitem__(self, index: slice) -> list[MatchLine]:
        if not isinstance(index, slice):
            raise TypeError("BotMatchLines is read by slices")
        start, stop = index.start or 0, index.stop
        if stop is None or index.step not in (None, 1) or start < 0 or stop < 0:
            fields = ["match_id", *(f"match__{f}" for f in LINE_FIELDS[1:])]
            seats = MatchSeat.objects.filter(bot_id=self.bot_id).order_by("-match_id")
            return _match_lines(list(seats.values_list(*fields)[index]))
        if stop <= start:
            return []
        if start:
            return _sought(_BOT_SEEK, (self.bot_id,), start, stop - start)
        return _match_lines(_BOT_LINES.rows(self.bot_id, offset=start, limit=stop - start))


def bot_match_count(*, bot_id: int) -> int:
    """How many matches the bot has a seat in (one index count, no join)."""
    rows = _MATCH_COUNT.rows(bot_id)
    return int(rows[0][0]) if rows else 0


_MATCH_COUNT = Compiled(
    lambda b: (
        MatchSeat.objects.filter(bot_id=b)
        .order_by()
        .values("bot_id")
        .annotate(n=Count("*"))  # on the (bot, match) index alone: no row read
        .values_list("n")
    ),
    [marker(1)],
)


def bot_match_seats(
    *, bot_id: int, status: str = "", tournament_id: int | None = None, ladder: str = ""
) -> QuerySet[MatchSeat]:
    """The bot's seats newest first, each with its match as the match lists read it (its
    result, tournament and deal joined, ``revealed``: ``matches_of_seats`` hands them
    over), for a keyset paginator ordered by ``-match_id``: a cursor's bound is a range
    of the (bot, match) index, each match joined by primary key as the range is read
    (its own filters checked there), so a page costs the bot's seats it passes, not the
    ladder's matches. One query for the page."""
    seats = MatchSeat.objects.filter(bot_id=bot_id)
    if status:
        seats = seats.filter(match__status=status)
    if tournament_id is not None:
        seats = seats.filter(match__tournament_id=tournament_id)
    if ladder:
        seats = seats.filter(match__ladder=ladder)
    return (
        seats.order_by("-match_id")
        .select_related("match__result", "match__tournament", "match__deal")
        .annotate(match_revealed=_revealed("match__"))
    )


def matches_of_seats(seats: Sequence[MatchSeat]) -> list[Match]:
    """The matches of ``bot_match_seats``' seats, in their order, as the match lists give
    them: ``revealed`` set, the deal's matches (one query, only when a match has a deal)
    and the seats as rows (``with_seat_rows``, one query)."""
    matches = []
    for seat in seats:
        match = seat.match
        match.revealed = seat.match_revealed  # type: ignore[attr-defined]
        matches.append(match)
    prefetch_related_objects([m for m in matches if m.deal_id is not None], deal_siblings())
    return with_seat_rows(matches)


def bot_match_page(
    *, bot_id: int, before: int | None = None, size: int = 50, status: str = ""
) -> tuple[list[Match], int | None]:
    """A keyset page of the bot's matches newest first: up to ``size`` of them with ids
    below ``before`` (all when None), and the id to pass as ``before`` for the next page
    (None at the end). The gRPC list's page (its token is that id)."""
    seats = bot_match_seats(bot_id=bot_id, status=status)
    if before is not None:
        seats = seats.filter(match_id__lt=before)
    found = list(seats[: size + 1])
    page = matches_of_seats(found[:size])
    return page, (found[size - 1].match_id if len(found) > size else None)
