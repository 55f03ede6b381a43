"""The two ways the REST API pages a list.

``PagePagination``: page numbers with a total ``count``, for lists whose size is
bounded by the number of bots (leaderboard positions need the offset).
``NewestFirstPagination``: keyset (cursor) pages by descending id, for lists
that grow with every match: no COUNT and no OFFSET, so a deep page costs what
the first one does.
"""

from __future__ import annotations

from typing import Any

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
            return self.page_size  # type: ignore[attr-defined,no-any-return]
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
