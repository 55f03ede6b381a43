"""Throttles whose rates are read at request time (so settings overrides apply)."""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class _LiveRate:
    scope: str | None

    def get_rate(self) -> str | None:
        return settings.REST_FRAMEWORK.get("DEFAULT_THROTTLE_RATES", {}).get(self.scope)


class AnonThrottle(_LiveRate, AnonRateThrottle):
    """Per-IP limit for clients without credentials."""


class UserThrottle(_LiveRate, UserRateThrottle):
    """Per-user limit for authenticated clients."""
