"""Throttles whose rates are read at request time (so settings overrides apply), keyed on
the client address as every limit of the ladder sees it (`ladder.common.ratelimit`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import AnonRateThrottle, BaseThrottle, UserRateThrottle

from ladder.accounts.auth_limits import request_address
from ladder.accounts.counters import WindowLimit
from ladder.common.metrics import THROTTLED


class _LiveRate:
    scope: str | None

    def get_rate(self) -> str | None:
        return settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES", {}).get(self.scope)

    def get_ident(self, request: Request) -> str:
        # The socket's peer unless LADDER_NUM_PROXIES trusted proxies say otherwise;
        # DRF's own get_ident believes any X-Forwarded-For when NUM_PROXIES is unset.
        return request_address(request)

    def throttle_failure(self) -> bool:
        THROTTLED.labels("rest", self.scope or "default").inc()
        return False


class AnonThrottle(_LiveRate, AnonRateThrottle):
    """Per-address limit for clients without credentials."""


class UserThrottle(_LiveRate, UserRateThrottle):
    """Per-user limit for authenticated clients."""


class CountedThrottle(BaseThrottle):
    """A throttle that holds under concurrency and across processes: each request takes a
    unit of a `WindowLimit` (one conditional UPDATE in the database) before it runs.

    DRF's own throttles read a history from the cache, decide, then write it back:
    requests that arrive together all read the same history and all pass. For the
    limits that guard costly work (exports, replay uploads) the unit is taken first.
    """

    scope = ""
    _wait: int | None = None

    def get_rate(self) -> str | None:
        raise NotImplementedError

    def get_ident(self, request: Request) -> str:
        return f"address:{request_address(request)}"

    def allow_request(self, request: Request, view: Any) -> bool:
        limit = WindowLimit.from_rate(f"throttle-{self.scope}", self.get_rate())
        if limit is None:
            return True
        taken = limit.take(self.get_ident(request))
        self._wait = taken.retry_after
        if not taken.ok:
            THROTTLED.labels("rest", self.scope).inc()
        return taken.ok

    def wait(self) -> int | None:
        return self._wait


class ExportThrottle(CountedThrottle):
    """Per-user limit on game exports (``LADDER_EXPORT_THROTTLE``): each streams many replays."""

    scope = "exports"

    def get_rate(self) -> str | None:
        return settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES", {}).get(self.scope)

    def get_ident(self, request: Request) -> str:
        user = request.user
        if user is not None and user.is_authenticated:
            return f"user:{user.pk}"
        return super().get_ident(request)
