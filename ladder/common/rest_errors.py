"""Every API error is a JSON body ``{"error": <code>, "detail": <message>, ...}``."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from ladder.common import exceptions as app
from ladder.common import request_id

APP_STATUS = {
    app.DailyQuotaExceeded: status.HTTP_429_TOO_MANY_REQUESTS,
    app.QuotaExceeded: status.HTTP_403_FORBIDDEN,
    app.NotFound: status.HTTP_404_NOT_FOUND,
    app.PermissionDenied: status.HTTP_403_FORBIDDEN,
    app.Conflict: status.HTTP_409_CONFLICT,
}


def _flatten(detail: Any) -> str:
    if isinstance(detail, dict):
        return "; ".join(f"{k}: {_flatten(v)}" for k, v in detail.items())
    if isinstance(detail, list):
        return " ".join(_flatten(v) for v in detail)
    return str(detail)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Map service errors and DRF/Django errors to one JSON shape."""
    if isinstance(exc, app.ApplicationError):
        code = next((c for cls, c in APP_STATUS.items() if isinstance(exc, cls)), 400)
        return Response({"error": exc.code, "detail": exc.message, **exc.extra}, status=code)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(
            exc.message_dict if hasattr(exc, "message_dict") else exc.messages
        )
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    assert isinstance(exc, exceptions.APIException)
    body: dict[str, Any] = {
        "error": exc.get_codes() if isinstance(exc.get_codes(), str) else exc.default_code,
        "detail": _flatten(exc.detail),
    }
    if isinstance(exc, exceptions.ValidationError):
        body["error"] = "invalid"
        body["fields"] = exc.detail
    wait = getattr(exc, "wait", None) if isinstance(exc, exceptions.Throttled) else None
    if wait is not None:
        body["retry_after"] = int(wait)
    response.data = body
    return response


def json_404(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    return JsonResponse({"error": "not_found", "detail": "no such page"}, status=404)


def json_500(request: HttpRequest) -> JsonResponse:
    """The traceback is in the server log under this request id; the client gets the id."""
    return JsonResponse(
        {"error": "server_error", "detail": "internal error", "request_id": request_id.current()},
        status=500,
    )
