"""One id per request, in every log line the request causes and in its answer.

A client that reports "I got a 500" quotes the id from the ``X-Request-ID``
response header (or the ``request_id`` of the JSON error); an operator greps the
log for it and finds the traceback. The id comes from the request's own
``X-Request-ID`` (or gRPC ``x-request-id`` metadata) when that looks like an id
(a proxy in front may already have set one), else it is made here.
"""

from __future__ import annotations

import contextvars
import logging
import re
import uuid
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

HEADER = "X-Request-ID"
_SAFE = re.compile(r"[A-Za-z0-9._:-]{8,64}")
_current: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")


def current() -> str:
    """The id of the request being served ('-' outside of one)."""
    return _current.get()


def accept(candidate: str | None) -> str:
    """``candidate`` if it looks like a request id, else a new one."""
    if candidate and _SAFE.fullmatch(candidate):
        return candidate
    return uuid.uuid4().hex


class bound:
    """Make ``request_id`` the current one for the duration of the block.

    A class, not a generator: a Play stream's coroutine stays inside this block for
    hours, and ten thousand of them should not each keep a suspended generator."""

    __slots__ = ("_token", "request_id")

    def __init__(self, request_id: str) -> None:
        self.request_id = request_id
        self._token: contextvars.Token[str] | None = None

    def __enter__(self) -> str:
        self._token = _current.set(self.request_id)
        return self.request_id

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _current.reset(self._token)
            self._token = None


class RequestIdFilter(logging.Filter):
    """Adds ``request_id`` to every record (the logging format shows it)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _current.get()
        return True


class RequestIdMiddleware:
    """Binds the request's id for its log lines and returns it in ``X-Request-ID``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with bound(accept(request.headers.get(HEADER))) as request_id:
            request.request_id = request_id  # type: ignore[attr-defined]
            response = self.get_response(request)
        response[HEADER] = request_id
        return response
