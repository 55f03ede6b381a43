"""A database that is away (restarting, failing over, unreachable) answers "come back soon".

While PostgreSQL restarts, every query fails with ``OperationalError`` (the server's
``AdminShutdown``, then "connection refused") or ``InterfaceError`` (a connection it
closed). That is not a bug of the call and not the client's doing: the gRPC service
answers UNAVAILABLE (which clients retry) and the REST API and the pages 503 with
``Retry-After``, never INTERNAL / 500 with a traceback in the log for each call. Other
database errors (an integrity error, a bad query) stay what they are: bugs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse

log = logging.getLogger("ladder.database")

RETRY_AFTER_S = 5  # a restart of PostgreSQL takes seconds
MESSAGE = "the database is unavailable for a moment; retry shortly"


def is_outage(exc: BaseException) -> bool:
    """Is ``exc`` the database being away (not a bug of the call)?"""
    return isinstance(exc, OperationalError | InterfaceError)


def unavailable_response(request: HttpRequest) -> HttpResponse:
    """503 with Retry-After: JSON for the API, a short page for the rest."""
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(
            {"error": "unavailable", "detail": MESSAGE, "retry_after": RETRY_AFTER_S},
            status=503,
        )
    else:
        response = HttpResponse(
            f"<!doctype html><title>Back in a moment</title><p>{MESSAGE}.</p>",
            status=503,
            content_type="text/html; charset=utf-8",
        )
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response


class DatabaseOutageMiddleware:
    """Turns a database outage during a request into 503 + Retry-After."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        if not is_outage(exc):
            return None
        log.warning("%s %s: database unavailable (%s): 503", request.method, request.path, exc)
        return unavailable_response(request)
