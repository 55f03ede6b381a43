"""Pages that update themselves: one small JSON endpoint the pages poll.

``/live/pulse.json`` answers a token that changes whenever a match is queued,
starts or ends (``match_selectors.ladder_pulse``), cached for a moment so any
number of open tabs cost the database one read per period. A page marks the parts
that may change with ``data-live`` (and an id); ``site.js`` polls the pulse while
the tab is visible (never while it is hidden) and, when it changed, fetches the
page again and swaps those parts in. No new server component, no open
connection per viewer, and a page without JavaScript is the same page.
"""

from __future__ import annotations

from django.core.cache import cache
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ladder.matches import selectors as match_selectors

PULSE_CACHE_S = 2
POLL_MS = 5000  # what site.js waits between polls


@never_cache
@require_GET
def pulse(request: HttpRequest) -> JsonResponse:
    token = cache.get("ladder-web:pulse")
    if token is None:
        token = match_selectors.ladder_pulse()
        cache.set("ladder-web:pulse", token, PULSE_CACHE_S)
    return JsonResponse({"pulse": token, "poll_ms": POLL_MS})
