"""Throttles whose rates are read at request time (so settings overrides apply), keyed on
the client address as every limit of the ladder sees it (`ladder.common.ratelimit`)."""

from __future__ import annotations

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from ladder.accounts.auth_limits import request_address
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


class ExportThrottle(_LiveRate, UserRateThrottle):
    """Per-user limit on game exports (``LADDER_EXPORT_THROTTLE``): each streams many replays."""

    scope = "exports"
