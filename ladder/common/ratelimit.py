"""Counting per client in Django's cache, and knowing who the client is.

Two things every limit of the ladder needs, kept in one place so REST, the
session login and gRPC count and identify alike:

- `FixedWindow`: how many times a key was hit in the current window of
  ``period`` seconds. It lives in Django's default cache, so it is shared by
  every process only when that cache is (``LADDER_CACHE_URL``, e.g. Redis);
  the local-memory default counts per process.
- `client_address`: the address a request came from. It is the socket's peer
  unless ``LADDER_NUM_PROXIES`` trusted proxies are configured, and only then
  is ``X-Forwarded-For`` read (the N-th address from the right, the one the
  outermost trusted proxy saw). A client-supplied header is never trusted by
  default: a new value per request would otherwise be a new client per request.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache

_PERIODS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60}
_PERIODS |= {"h": 3600, "hour": 3600, "d": 86400, "day": 86400}


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """'600/min' -> (600, 60), '20/15min' -> (20, 900); empty, '0' or 'off' -> None."""
    if not rate or rate.strip().lower() in {"0", "off", "none"}:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d*)\s*([a-z]+)\s*", rate.lower())
    if not m or m.group(3) not in _PERIODS:
        raise ValueError(f"rate must look like 600/min or 20/15min, not {rate!r}")
    return int(m.group(1)), int(m.group(2) or 1) * _PERIODS[m.group(3)]


@dataclass(frozen=True)
class FixedWindow:
    """Hits per key in aligned windows of ``period`` seconds; ``limit`` hits are allowed."""

    name: str
    limit: int
    period: int

    @classmethod
    def from_rate(cls, name: str, rate: str | None) -> FixedWindow | None:
        parsed = parse_rate(rate)
        return None if parsed is None else cls(name, *parsed)

    def _cache_key(self, key: str) -> str:
        # Hashed: keys may hold any text (a username), and some caches restrict keys.
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return f"ladder-rate:{self.name}:{int(time.time() // self.period)}:{digest}"

    def count(self, key: str) -> int:
        return int(cache.get(self._cache_key(key)) or 0)

    def hit(self, key: str) -> int:
        """Count one hit; the count in this window, this hit included."""
        cache_key = self._cache_key(key)
        cache.add(cache_key, 0, timeout=self.period + 1)
        try:
            return int(cache.incr(cache_key))
        except ValueError:  # expired between add and incr: a fresh window
            cache.add(cache_key, 1, timeout=self.period + 1)
            return 1

    def give_back(self, key: str) -> None:
        """Undo one `hit` of this window (the attempt it reserved did not count after all)."""
        with contextlib.suppress(ValueError):  # the window ended meanwhile: nothing to undo
            cache.decr(self._cache_key(key))

    def retry_after(self) -> int:
        """Seconds until the current window ends (at least 1)."""
        return max(1, int(self.period - time.time() % self.period + 0.999))


def client_address(remote_addr: str, forwarded_for: str | None) -> str:
    """The client's address: the socket peer, or what the trusted proxies say it was."""
    proxies = int(settings.REST_FRAMEWORK.get("NUM_PROXIES") or 0)
    if proxies <= 0 or not forwarded_for:
        return remote_addr
    hops = [a.strip() for a in forwarded_for.split(",") if a.strip()]
    return hops[-min(proxies, len(hops))] if hops else remote_addr
