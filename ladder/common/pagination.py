"""The two ways the REST API pages a list.

``PagePagination``: page numbers with a total ``count``, for lists whose size is
bounded by the number of bots (leaderboard positions need the offset).
``NewestFirstPagination``: keyset (cursor) pages by descending id, for lists
that grow with every match: no COUNT and no OFFSET, so a deep page costs what
the first one does.
"""

from __future__ import annotations

from rest_framework.pagination import CursorPagination, PageNumberPagination

MAX_PAGE_SIZE = 200


class PagePagination(PageNumberPagination):
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE

    def offset(self) -> int:
        """Rows before the current page (after ``paginate_queryset``)."""
        assert self.page is not None, "call paginate_queryset first"
        return (self.page.number - 1) * self.page.paginator.per_page


class NewestFirstPagination(CursorPagination):
    ordering = "-id"
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
