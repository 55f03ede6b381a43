"""REST views of hosted bots' logs, for the bot's owner and staff only.

Kept apart from ``views.py``: these answer only the bot's owner and staff (the
selectors enforce it), and what they return was written by the bot itself, so
it is sent as inert text (``text/plain``, ``nosniff``, a sandboxing CSP, never
cached by shared caches).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.api.views import ERRORS
from ladder.bots import selectors as bot_selectors
from ladder.common.logs import log_read
from ladder.matches import selectors as match_selectors


def _private_text(data: bytes) -> HttpResponse:
    response = HttpResponse(data, content_type="text/plain; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Cache-Control"] = "private, no-store"
    return response


class SeatLogApi(APIView):
    """What a hosted bot wrote (stdout+stderr, capped at 64 KiB) during one match."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={
            (200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, "the seat's log"),
            401: ERRORS[401],
            403: ERRORS[403],
            404: ERRORS[404],
        }
    )
    def get(self, request: Request, match_id: int, seat: int) -> HttpResponse:
        found = match_selectors.match_seat_log_for_owner(
            user=request.user, match_id=match_id, seat=seat
        )
        return _private_text(log_read(found.log.name))


class VersionSmokeApi(APIView):
    """A hosted version's smoke match: its status, what happened and the bot's log."""

    permission_classes = [IsAuthenticated]

    class OutputSerializer(serializers.Serializer):
        number = serializers.IntegerField()
        status = serializers.CharField(help_text="pending, valid or invalid")
        outcome = serializers.CharField()
        played_at = serializers.DateTimeField(allow_null=True)
        log = serializers.CharField(help_text="the bot's output in its smoke match")

    @extend_schema(responses={200: OutputSerializer, **ERRORS})
    def get(self, request: Request, bot_id: int, number: int) -> Response:
        version = bot_selectors.bot_version_for_owner(
            user=request.user, bot_id=bot_id, number=number
        )
        log: Any = log_read(version.smoke_log.name) if version.smoke_log.name else b""
        data = {
            "number": version.number,
            "status": version.status,
            "outcome": version.smoke_outcome,
            "played_at": version.smoke_at,
            "log": log.decode("utf-8", errors="replace"),
        }
        response = Response(self.OutputSerializer(data).data)
        response["Cache-Control"] = "private, no-store"
        return response
