"""Pages of the Ladder service's lists: sizes, checked tokens, offset and keyset pages."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.db.models import QuerySet

from ladder.common import keyset
from ladder.common.exceptions import ApplicationError

DEFAULT_PAGE_SIZE = 50

MAX_PAGE_SIZE = 200

TOKEN_PATTERN = re.compile(r"[0-9]{1,18}")


def page_size_of(page_size: int) -> int:
    if page_size < 0:
        raise ApplicationError("page_size must not be negative")
    return min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def token_number(page_token: str) -> int | None:
    """The number in a page token this server issued (None for the first page)."""
    if not page_token:
        return None
    if not TOKEN_PATTERN.fullmatch(page_token):
        raise ApplicationError("page_token is not one this server issued")
    return int(page_token)


def offset_page(
    qs: QuerySet[Any],
    page_size: int,
    page_token: str,
    *,
    bound: Callable[[int], tuple[int, int] | None] | None = None,
) -> tuple[list[Any], int, str]:
    """A page by offset (for lists bounded by the number of bots): rows, offset, next token.
    ``bound`` (a board in its own order: ``keyset.SeekPaginator``'s) finds the row before
    the offset on an index instead of an OFFSET over ``qs``."""
    size = page_size_of(page_size)
    offset = token_number(page_token) or 0
    row = bound(offset) if bound is not None and offset else None
    if row is not None:
        rows = list(qs.filter(keyset.after(*row))[: size + 1])
    else:
        rows = list(qs[offset : offset + size + 1])
    return rows[:size], offset, str(offset + size) if len(rows) > size else ""
