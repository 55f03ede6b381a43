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
  ``matches_in_order``): the page's match ids read as a range of the index from
  the cursor, then those matches by primary key;
- the gRPC list (``bot_match_page``): the same range, from a page token.

Each costs the page and, for a deep page by number, the bot's own seats above it:
never the ladder's other matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import Count, QuerySet

from ladder.common.compiled import SLICE, Compiled, marker
from ladder.matches.models import Match, MatchSeat
from ladder.matches.selectors import (
    LINE_FIELDS,
    MatchLine,
    MatchLines,
    _match_lines,
    _sought,
    match_list,
    with_seat_rows,
)

__all__ = [
    "BotMatchLines",
    "bot_match_count",
    "bot_match_page",
    "bot_match_seats",
    "matches_in_order",
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
) -> QuerySet[Any, Any]:
    """The bot's seats newest first as ``{"match_id": id}`` rows, for a keyset paginator
    ordered by ``-match_id`` (a cursor's bound is a range of the (bot, match) index);
    the match's own filters are checked on each match by primary key as the range is
    read, so a page costs the bot's seats it passes, not the ladder's matches."""
    seats = MatchSeat.objects.filter(bot_id=bot_id)
    if status:
        seats = seats.filter(match__status=status)
    if tournament_id is not None:
        seats = seats.filter(match__tournament_id=tournament_id)
    if ladder:
        seats = seats.filter(match__ladder=ladder)
    return seats.order_by("-match_id").values("match_id")


def matches_in_order(match_ids: Sequence[int]) -> list[Match]:
    """Those matches newest first as the match lists give them (``match_list``, seats as
    rows: ``with_seat_rows``), read by primary key."""
    if not match_ids:
        return []
    rows = list(match_list(seats=False).filter(pk__in=list(match_ids)))
    return with_seat_rows(rows)


def bot_match_page(
    *, bot_id: int, before: int | None = None, size: int = 50, status: str = ""
) -> tuple[list[Match], int | None]:
    """A keyset page of the bot's matches newest first: up to ``size`` of them with ids
    below ``before`` (all when None), and the id to pass as ``before`` for the next page
    (None at the end). The gRPC list's page (its token is that id)."""
    seats = bot_match_seats(bot_id=bot_id, status=status)
    if before is not None:
        seats = seats.filter(match_id__lt=before)
    ids = [row["match_id"] for row in seats[: size + 1]]
    page = matches_in_order(ids[:size])
    return page, (ids[size - 1] if len(ids) > size else None)
