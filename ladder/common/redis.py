"""The Redis client of the connected bots' presence and of token revocations.

``LADDER_PRESENCE_URL`` (default REDIS_URL, else LADDER_CACHE_URL); keys under
``LADDER_PRESENCE_PREFIX`` so deployments or test runs sharing one Redis keep apart.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.conf import settings


class PresenceUnavailable(Exception):
    """No Redis is configured: connected bots cannot play."""


def redis_url(url: str) -> str:
    """Kombu's ``redis+socket:///path`` (the broker's spelling) as redis-py wants it."""
    if url.startswith("redis+socket://"):
        return "unix://" + url[len("redis+socket://") :]
    return url


@cache
def _client(url: str) -> Any:
    import redis

    return redis.Redis.from_url(
        redis_url(url), socket_timeout=2.0, socket_connect_timeout=2.0, health_check_interval=30
    )


def configured() -> bool:
    return bool(settings.LADDER_PRESENCE_URL)


def client() -> Any:
    """The shared client (PresenceUnavailable when no Redis is configured)."""
    url = settings.LADDER_PRESENCE_URL
    if not url:
        raise PresenceUnavailable(
            "connected bots need Redis: set REDIS_URL (or LADDER_PRESENCE_URL)"
        )
    return _client(url)


def prefixed(*parts: object) -> str:
    return settings.LADDER_PRESENCE_PREFIX + ":".join(str(p) for p in parts)
