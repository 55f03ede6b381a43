"""Whole pages for anonymous visitors, kept in the shared cache until a match is recorded.

The leaderboard and the bot pages change when a result is recorded (ratings,
records, recent matches) and otherwise barely at all, yet rendering them is
most of their cost. Every key carries a *generation*, a counter in the shared
cache that ``bump`` raises when a write that changes what they show commits
(``pages_changed``: a recorded match, a bot created, edited, given a version,
suspended or deleted); a page rendered before that is then never read again and
ages out. ``LADDER_PAGE_CACHE_SECONDS`` bounds how stale the rest may get (a
connected bot's presence, which changes too often to bump for);
it is 0 (off) when no shared cache is configured, since a per-process cache
would be invalidated in one process only.

Only visitors without a session or message cookie are served from it: a signed-in
page shows the user, a CSRF token and messages, which must never reach another
visitor. Responses say ``Vary: Cookie`` so that no proxy mixes the two either.
The cached entry is the body, status and content type; the middleware still
runs on every response (security headers, CSP, request id).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers

GENERATION_KEY = "pagecache:generation"


def generation() -> int:
    """The current generation (0 before the first recorded match, or while the cache is away)."""
    return int(cache.get(GENERATION_KEY) or 0)


def bump() -> None:
    """A new generation: every cached page is out of date. Called on commit of a recording."""
    if not cache.add(GENERATION_KEY, 1, timeout=None):
        try:
            cache.incr(GENERATION_KEY)
        except ValueError:  # expired or evicted between the two calls
            cache.add(GENERATION_KEY, 1, timeout=None)


def pages_changed() -> None:
    """Call inside a write that changes what cached pages show: a new generation on commit."""
    transaction.on_commit(bump, robust=True)


def lifetime() -> int:
    return int(getattr(settings, "LADDER_PAGE_CACHE_SECONDS", 0) or 0)


def anonymous(request: HttpRequest) -> bool:
    """A visitor with nothing personal to show: no session and no pending messages."""
    return settings.SESSION_COOKIE_NAME not in request.COOKIES and "messages" not in request.COOKIES


def page_key(request: HttpRequest, gen: int) -> str:
    where = f"{request.get_host()}|{request.get_full_path()}".encode()
    return f"pagecache:{gen}:{hashlib.sha256(where).hexdigest()}"


View = Callable[..., HttpResponse]


def cached_for_anonymous(view: View) -> View:
    """Serve ``view``'s 200 answers to anonymous GETs from the shared cache (see the module)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        seconds = lifetime()
        if not seconds or request.method not in ("GET", "HEAD") or not anonymous(request):
            response = view(request, *args, **kwargs)
            patch_vary_headers(response, ("Cookie",))
            return response
        key = page_key(request, generation())
        hit = cache.get(key)
        if hit is not None:
            status, content_type, body = hit
            response = HttpResponse(body, status=status, content_type=content_type)
            response["X-Page-Cache"] = "hit"
        else:
            response = view(request, *args, **kwargs)
            if (
                response.status_code == 200
                and not response.streaming
                and not response.cookies
                and not response.has_header("Set-Cookie")
            ):
                cache.set(key, (200, response["Content-Type"], response.content), seconds)
            response["X-Page-Cache"] = "miss"
        patch_vary_headers(response, ("Cookie",))
        return response

    return wrapper
