"""The site: the shared cache, cached anonymous pages, /metrics, the replay viewer."""

from __future__ import annotations

from typing import Any

from ladder.settings.environment import Environment
from ladder.settings.services import CACHE_PREFIX, CACHE_URL

env = Environment("web")

# Throttles and failure counts live in the cache: shared by every process only when the
# cache is (web workers, grpcserver); the memory default is for one process.
CACHES: dict[str, dict[str, Any]] = {
    "default": (
        {
            # Answers as an empty cache while Redis is away (limits fail open, logged).
            "BACKEND": "ladder.common.cache.DegradingRedisCache",
            "LOCATION": CACHE_URL,
            # A cut-off Redis must cost a request a moment, not the client's patience.
            "OPTIONS": {"socket_connect_timeout": 1.0, "socket_timeout": 1.0},
            # Keeps apart deployments (or test runs) that share one Redis database.
            "KEY_PREFIX": CACHE_PREFIX,
        }
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
# Anonymous leaderboard and bot pages are kept this long in the shared cache (a recorded
# match invalidates them at once; this bounds what else may go stale). Off without a
# shared cache: a per-process cache would be invalidated in one process only.
_page_cache_s = env.integer(
    "LADDER_PAGE_CACHE_SECONDS",
    30,
    unit="s",
    why="anonymous leaderboard and bot pages are kept this long in the shared cache (only "
    "with LADDER_CACHE_URL; a recorded match invalidates them at once)",
)
LADDER_PAGE_CACHE_SECONDS = _page_cache_s if CACHE_URL else 0
LADDER_METRICS_ALLOW = env.text(
    "LADDER_METRICS_ALLOW",
    "127.0.0.0/8,::1/128",
    why="networks that may read the web's /metrics page (CIDRs, comma list)",
)
# The replay viewer (docs/replay-timeline.md).
LADDER_VIEWER_UPLOAD_MAX_BYTES = env.integer(
    "LADDER_VIEWER_UPLOAD_MAX_BYTES", 1024 * 1024, unit="bytes", why="a replay opened in the viewer"
)
LADDER_VIEWER_JSON_MAX_BYTES = env.integer(
    "LADDER_VIEWER_JSON_MAX_BYTES", 8 * 1024 * 1024, unit="bytes", why="that replay unpacked"
)
LADDER_VIEWER_CACHE_SECONDS = env.integer(
    "LADDER_VIEWER_CACHE_SECONDS", 7 * 24 * 3600, unit="s", why="how long a built timeline is kept"
)
LADDER_VIEWER_UPLOAD_RATE = env.text(
    "LADDER_VIEWER_UPLOAD_RATE", "30/min", why="replays opened in the viewer per client address"
)
