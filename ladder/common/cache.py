"""The shared cache (Redis), degrading instead of failing when Redis is away.

Throttles, failed-login counters and cached pages read the cache on almost every
request; the cache is the same Redis as the broker in a usual deployment. When
that Redis is down or cut off, a plain ``RedisCache`` raises on every call, so
every request (REST, gRPC sign-in, pages) would fail with a 500 / INTERNAL even
though the database is fine. ``DegradingRedisCache`` answers as an empty cache
instead: reads miss, writes are dropped, counters count nothing - that is,
limits fail *open* for as long as Redis is away (the alternative, refusing every
request, turns a cache outage into a full outage).

After a failure it does not ask Redis again for ``RETRY_AFTER_S``, so a Redis
that is cut off (connections time out instead of being refused) costs one short
timeout per process and period, not one per call. Each failure is counted
(``failures()``; the health probe and operators read it) and logged at most once
per ``LOG_EVERY_S`` per process, with the number of calls degraded since.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache.backends.redis import RedisCache

log = logging.getLogger("ladder.cache")

RETRY_AFTER_S = 5.0
LOG_EVERY_S = 60.0
T = TypeVar("T")


class _Outage:
    """This process's view of the cache: failures counted, when to try again, when to log."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.failures = 0
        self.skipped = 0
        self.down_until = 0.0
        self.logged_at = -LOG_EVERY_S
        self.unlogged = 0

    def note(self, exc: Exception, op: str) -> None:
        now = time.monotonic()
        with self.lock:
            self.failures += 1
            self.unlogged += 1
            self.down_until = now + RETRY_AFTER_S
            if now - self.logged_at < LOG_EVERY_S:
                return
            self.logged_at, count, self.unlogged = now, self.unlogged, 0
        log.warning(
            "cache unavailable (%s on %s: %s); answering as an empty cache, counters "
            "fail open (%d call(s) degraded since the last report)",
            type(exc).__name__, op, exc, count,
        )  # fmt: skip

    def skip(self) -> bool:
        with self.lock:
            if time.monotonic() < self.down_until:
                self.skipped += 1
                return True
            return False


_outage = _Outage()


def failures() -> int:
    """Cache calls that failed in this process (each answered as by an empty cache)."""
    return _outage.failures


def degraded() -> bool:
    """Is this process answering without the cache right now?"""
    return time.monotonic() < _outage.down_until


def _errors() -> tuple[type[Exception], ...]:
    import redis.exceptions

    return (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)


class DegradingRedisCache(RedisCache):
    """Django's ``RedisCache`` that answers as an empty cache while Redis is away."""

    def _degrade(self, op: str, call: Callable[[], T], fallback: T) -> T:
        if _outage.skip():
            return fallback
        try:
            return call()
        except _errors() as exc:
            _outage.note(exc, op)
            return fallback

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        return self._degrade(
            "get", lambda: super(DegradingRedisCache, self).get(key, default, version), default
        )

    def get_many(self, keys: Any, version: int | None = None) -> dict[Any, Any]:
        return self._degrade(
            "get_many", lambda: super(DegradingRedisCache, self).get_many(keys, version), {}
        )

    def has_key(self, key: Any, version: int | None = None) -> bool:
        return self._degrade(
            "has_key", lambda: super(DegradingRedisCache, self).has_key(key, version), False
        )

    def add(self, key: Any, value: Any, timeout: Any = None, version: int | None = None) -> bool:
        return self._degrade(
            "add", lambda: super(DegradingRedisCache, self).add(key, value, timeout, version), False
        )

    def set(self, key: Any, value: Any, timeout: Any = None, version: int | None = None) -> None:
        self._degrade(
            "set", lambda: super(DegradingRedisCache, self).set(key, value, timeout, version), None
        )

    def set_many(self, data: Any, timeout: Any = None, version: int | None = None) -> list[Any]:
        return self._degrade(
            "set_many",
            lambda: super(DegradingRedisCache, self).set_many(data, timeout, version),
            [],
        )

    def touch(self, key: Any, timeout: Any = None, version: int | None = None) -> bool:
        return self._degrade(
            "touch", lambda: super(DegradingRedisCache, self).touch(key, timeout, version), False
        )

    def delete(self, key: Any, version: int | None = None) -> bool:
        return self._degrade(
            "delete", lambda: super(DegradingRedisCache, self).delete(key, version), False
        )

    def delete_many(self, keys: Any, version: int | None = None) -> None:
        self._degrade(
            "delete_many", lambda: super(DegradingRedisCache, self).delete_many(keys, version), None
        )

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        # Counting nothing while Redis is away: every limit built on it fails open.
        return self._degrade(
            "incr", lambda: super(DegradingRedisCache, self).incr(key, delta, version), 0
        )

    def clear(self) -> None:
        self._degrade("clear", lambda: super(DegradingRedisCache, self).clear(), None)
