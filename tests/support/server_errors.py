"""A guard for the suites that drive the API: any 5xx answer fails the test that caused it.

The Django test client already re-raises a view's exception; this also catches the
5xx answers that are not exceptions (a handler's 500 page, a 502/503 of our own).
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

SEEN: list[str] = []  # "METHOD path -> status" of every 5xx answer since the last clear


class ServerErrorGuard:
    """Test-only middleware, first in the chain: notes every 5xx answer."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.status_code >= 500:
            SEEN.append(f"{request.method} {request.get_full_path()} -> {response.status_code}")
        return response
