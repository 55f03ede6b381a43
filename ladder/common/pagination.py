"""The two ways the REST API pages a list.

``PagePagination``: page numbers with a total ``count``, for lists whose size is
bounded by the number of bots (leaderboard positions need the offset).
``NewestFirstPagination``: keyset (cursor) pages by descending id, for lists
that grow with every match: no COUNT and no OFFSET, so a deep page costs what
the first one does.
"""

from __future__ import annotations

from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Count, QuerySet, Window
from rest_framework.exceptions import ValidationError
from rest_framework.pagination import CursorPagination, PageNumberPagination
from rest_framework.request import Request

MAX_PAGE_SIZE = 200


class StrictPageSize:
    """``page_size`` is 1 or more when given (larger than the maximum: the maximum).

    DRF ignores a ``page_size`` it cannot read and serves the default; a client
    that asked for ``page_size=ten`` has a bug, so it gets a 400 saying so. The
    schema says the same (``minimum: 1``).
    """

    page_size_query_param: str | None = "page_size"
    max_page_size: int | None = MAX_PAGE_SIZE

    def get_page_size(self, request: Request) -> int | None:
        raw = request.query_params.get(self.page_size_query_param or "page_size")
        if raw is None or raw == "":
            return self.page_size  # type: ignore[attr-defined]
        if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
            raise ValidationError({"page_size": ["must be a whole number, 1 or more"]})
        return min(int(raw), self.max_page_size or MAX_PAGE_SIZE)

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        params: list[dict[str, Any]] = super().get_schema_operation_parameters(view)  # type: ignore[misc]
        for param in params:
            if param["name"] == self.page_size_query_param:
                param["schema"] = {"type": "integer", "minimum": 1}
        return params


class PagePagination(StrictPageSize, PageNumberPagination):
    def offset(self) -> int:
        """Rows before the current page (after ``paginate_queryset``)."""
        assert self.page is not None, "call paginate_queryset first"
        return (self.page.number - 1) * self.page.paginator.per_page


class NewestFirstPagination(StrictPageSize, CursorPagination):
    ordering = "-id"


TOTAL = "list_total"
"""The annotation ``with_total`` adds: the size of the whole list, on every row."""


def with_total(qs: QuerySet[Any]) -> QuerySet[Any]:
    """``qs`` with the size of the whole list on each row (``COUNT(*) OVER ()``), for
    ``WindowCountPaginator``: for a list its page query reads in full anyway (a text
    search sorts every match), the count costs no second scan."""
    return qs.annotate(**{TOTAL: Window(Count("*"))})


class WindowCountPaginator(Paginator):
    """A paginator whose count comes with the page's rows (``with_total``): one query
    instead of a ``COUNT`` and the page; an empty or invalid page counts the list as
    ``Paginator`` does, and answers as it does."""

    def _counted_page(self, number: Any) -> Page | None:
        """Page ``number`` with the count its rows carry, or None (empty, not a number)."""
        if isinstance(number, float) or self.orphans:
            return None
        try:
            asked = int(number)
        except (TypeError, ValueError):
            return None
        if asked < 1:
            return None
        bottom = (asked - 1) * self.per_page
        rows = list(self.object_list[bottom : bottom + self.per_page])
        if not rows:
            return None
        self.__dict__["count"] = getattr(rows[0], TOTAL)  # the cached property
        return Page(rows, asked, self)

    def page(self, number: Any) -> Page:
        page = self._counted_page(number)
        return super().page(number) if page is None else page

    def get_page(self, number: Any) -> Page:
        page = self._counted_page(number)
        return super().get_page(number) if page is None else page
