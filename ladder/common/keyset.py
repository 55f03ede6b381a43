"""Keyset (seek) pages over the board order: score descending, bot id ascending.

An OFFSET page reads and discards every row before it, so the last page of a
10,000-bot board costs 10,000 rows; a keyset page starts at the last row shown
(``score < s OR (score = s AND id > i)``, served by the (ladder, score, bot)
index) and costs what the first page does. A bot inserted or moved while a
reader walks the pages cannot make a row shown twice or skipped past the
cursor, which an offset cannot promise.

One cursor serves the REST leaderboard (``?cursor=``), the gRPC one (page
tokens) and the site's (next/previous links). It is opaque to clients: the
direction, the boundary row's score and id, and the position of the row before
the page (so positions keep counting without an offset). A cursor that does not
read is the first page: lists must answer every well-formed request, and the
fuzzing of the schema sends arbitrary strings.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page as NumberedPage
from django.core.paginator import Paginator
from django.db.models import Q, QuerySet

PREFIX = "k"  # tells a keyset token from the older numeric (offset) ones


@dataclass(frozen=True)
class Cursor:
    """A boundary row of a page: ``forward`` pages start after it, backward ones end before it.

    ``before`` is the number of rows ahead of the page this cursor opens.
    """

    forward: bool
    score: int
    bot_id: int
    before: int

    def encode(self) -> str:
        raw = f"{'n' if self.forward else 'p'}{self.score}:{self.bot_id}:{self.before}"
        return PREFIX + base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode(token: str | None) -> Cursor | None:
    """The cursor of ``token``, or None (first page) when it is empty or does not read."""
    if not token or not token.startswith(PREFIX) or len(token) > 100:
        return None
    body = token[len(PREFIX) :]
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)).decode("ascii")
        score, bot_id, before = raw[1:].split(":")
        cursor = Cursor(raw[0] == "n", int(score), int(bot_id), int(before))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if raw[0] not in "np" or cursor.before < 0 or cursor.bot_id < 1:
        return None
    return cursor


@dataclass(frozen=True)
class Page:
    """One keyset page: its rows, rows ahead of it, and the cursors of its neighbours."""

    rows: list[Any]
    before: int
    next: str
    previous: str


def after(score: int, bot_id: int) -> Q:
    """The rows after (score, bot_id) in the board's order. ``score <= s`` stated on its
    own makes the start of the range an index condition: PostgreSQL does not derive it
    from the OR, and walked the index from the top of the board (7,500 entries for a
    page after position 7,450)."""
    return Q(score__lte=score) & (Q(score__lt=score) | Q(score=score, id__gt=bot_id))


def board_page(qs: QuerySet[Any], size: int, token: str | None) -> Page:
    """A page of ``size`` rows of ``qs`` (bots annotated with ``score``, e.g. by
    ``ladder.bots.selectors.ranked``) at ``token``; one query of at most ``size + 1`` rows."""
    cursor = decode(token)
    if cursor is None:
        rows = list(qs.order_by("-score", "id")[: size + 1])
        before, more_ahead, more_behind = 0, False, len(rows) > size
        rows = rows[:size]
    elif cursor.forward:
        rows = list(
            qs.filter(after(cursor.score, cursor.bot_id)).order_by("-score", "id")[: size + 1]
        )
        before, more_ahead, more_behind = cursor.before, cursor.before > 0, len(rows) > size
        rows = rows[:size]
    else:
        ahead = Q(score__gte=cursor.score) & (
            Q(score__gt=cursor.score) | Q(score=cursor.score, id__lt=cursor.bot_id)
        )
        rows = list(qs.filter(ahead).order_by("score", "-id")[: size + 1])
        more_ahead = len(rows) > size
        rows = rows[:size][::-1]
        # Rows ahead may have moved since the cursor was made: never count below zero.
        before, more_behind = max(cursor.before - len(rows), 0), True
        if not more_ahead:
            before = 0
    nxt = prev = ""
    if rows and more_behind:
        last = rows[-1]
        nxt = Cursor(True, last.score, last.pk, before + len(rows)).encode()
    if rows and more_ahead:
        first = rows[0]
        prev = Cursor(False, first.score, first.pk, before).encode()
    return Page(rows=rows, before=before, next=nxt, previous=prev)


class SeekPaginator(Paginator):
    """Page numbers over the board in its own order (score descending, bot id ascending)
    without an OFFSET: page N starts after the row ``bound`` names for its offset (the
    board's index finds it; ``ratings.selectors.leaderboard_row_at``), then reads its
    rows as a keyset page does. The same rows, numbers and count as ``Paginator``
    over ``object_list`` (which must be in that order and hold the rows ``bound``
    counts); ``count`` when the caller knows it more cheaply."""

    def __init__(
        self,
        object_list: QuerySet[Any],
        per_page: int,
        *,
        bound: Callable[[int], tuple[int, int] | None],
        count: int | None = None,
    ) -> None:
        super().__init__(object_list, per_page)
        self.bound = bound
        if count is not None:
            self.__dict__["count"] = count  # the cached property

    def page(self, number: Any) -> NumberedPage:
        number = self.validate_number(number)
        bottom = (number - 1) * self.per_page
        row = self.bound(bottom) if bottom else None
        if row is None:
            return super().page(number)
        board: QuerySet[Any] = self.object_list  # type: ignore[assignment]
        return NumberedPage(list(board.filter(after(*row))[: self.per_page]), number, self)
