"""Redis, where one is used: the broker, the shared cache, the connected bots' presence.

Read first, as several parts fall back on ``REDIS_URL``.
"""

from __future__ import annotations

from ladder.settings.environment import Environment

env = Environment("redis and the broker")

REDIS_URL = env.text(
    "REDIS_URL",
    "",
    why="one Redis for the broker and the connected bots' presence (unset: the embedded broker "
    "in files)",
)
_broker_url = env.text(
    "CELERY_BROKER_URL", "", shown="REDIS_URL", why="the broker, when it is not REDIS_URL"
)
CACHE_URL = env.text(
    "LADDER_CACHE_URL",
    "",
    why="redis://host:port/db for a cache every process shares (throttles, failure counts, "
    "replay timelines, the anonymous pages); unset: memory of each process",
)
CACHE_PREFIX = env.text(
    "LADDER_CACHE_PREFIX", "", why="key prefix in that cache (deployments sharing one Redis)"
)
