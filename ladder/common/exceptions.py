"""Errors that services raise; every interface (REST, gRPC, admin) maps them itself.

Services never return HTTP codes; they raise one of these with a clear message,
and ``ladder.common.rest_errors`` turns each class into a status code and JSON body.
"""

from __future__ import annotations

from typing import Any


class ApplicationError(Exception):
    """A request that cannot be done as asked (maps to 400)."""

    code = "invalid"

    def __init__(self, message: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


class NotFound(ApplicationError):
    """The object does not exist or is not visible to the caller (404)."""

    code = "not_found"


class PermissionDenied(ApplicationError):
    """The caller is known but may not do this (403)."""

    code = "permission_denied"


class Conflict(ApplicationError):
    """The object's state does not allow this now (409)."""

    code = "conflict"


class QuotaExceeded(ApplicationError):
    """The user has used up one of their quotas (403; gRPC RESOURCE_EXHAUSTED).

    ``extra`` names the limit (its setting) and its value, so a client can tell
    which one it hit.
    """

    code = "quota_exceeded"


class DailyQuotaExceeded(QuotaExceeded):
    """A quota counted over the last day: trying again later helps (429)."""
