"""The viewer's endpoints (timeline JSON) and pages (a match's replay, a dropped replay file).

Thin: reading and building are `ladder.viewer.timelines`; the pages only place
the viewer (a template include and one static JS module) on the page.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from ladder.accounts.rest_throttling import CountedThrottle
from ladder.common.exceptions import NotFound
from ladder.common.rest_parsers import StrictMultiPartParser
from ladder.matches.selectors import match_detail, match_reveal
from ladder.viewer.selectors import live_view
from ladder.viewer.timelines import (
    ReplayTooLarge,
    Timeline,
    ViewerError,
    match_timeline,
    timeline_of_bytes,
    upload_max_bytes,
)

ERROR_BODY = inline_serializer(
    "ViewerError", {"error": serializers.CharField(), "detail": serializers.CharField()}
)


def timeline_response(request: Request | HttpRequest, timeline: Timeline) -> HttpResponse:
    """The timeline JSON, gzip-encoded for clients that accept it, with its ETag."""
    asked = {
        t.strip().removeprefix("W/") for t in request.headers.get("If-None-Match", "").split(",")
    }
    if timeline.etag.removeprefix("W/") in asked:  # weak comparison (RFC 9110 13.1.2)
        response = HttpResponse(status=304)
    elif "gzip" in request.headers.get("Accept-Encoding", ""):
        response = HttpResponse(timeline.gzipped, content_type="application/json")
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(timeline.json(), content_type="application/json")
    response["ETag"] = timeline.etag
    response["Vary"] = "Accept-Encoding"
    response["Cache-Control"] = "public, max-age=3600"
    response["X-Content-Type-Options"] = "nosniff"
    return response


def does_not_verify_response(timeline: Timeline) -> HttpResponse:
    """422: the verdict, and the timeline up to the first difference (shown, never silently)."""
    head = {
        "error": "replay_does_not_verify",
        "detail": timeline.verification.get("first_difference", ""),
        "verification": timeline.verification,
    }
    body = json.dumps(head, separators=(",", ":"))[:-1].encode()
    return HttpResponse(
        body + b',"timeline":' + timeline.json() + b"}",
        status=422,
        content_type="application/json",
    )


class _TimelineApi(APIView):
    """Public and side-effect free: no authentication, so no CSRF token is needed."""

    authentication_classes: list[Any] = []
    permission_classes = [AllowAny]

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, ViewerError):
            return Response({"error": exc.code, "detail": exc.message}, status=exc.status)
        return super().handle_exception(exc)


class MatchTimelineApi(_TimelineApi):
    """The replay of a finished match as a per-step timeline (docs/replay-timeline.md)."""

    @extend_schema(
        responses={
            200: OpenApiResponse(
                description="The timeline (`digdown-timeline/1`); `verification.ok` is false, "
                "and the timeline stops before the first difference, when the stored replay "
                "does not re-simulate to its own events and result.",
                response=OpenApiTypes.OBJECT,
            ),
            304: OpenApiResponse(description="If-None-Match matched the ETag"),
            404: ERROR_BODY,
            409: OpenApiResponse(description="The match has not finished", response=ERROR_BODY),
            422: OpenApiResponse(
                description="The stored replay cannot be read", response=ERROR_BODY
            ),
        },
    )
    def get(self, request: Request, match_id: int) -> HttpResponse:
        return timeline_response(request, match_timeline(match_id=match_id))


class UploadThrottle(CountedThrottle):
    """Re-simulating an uploaded replay costs CPU: a limit per client address of its own
    (the address as every limit of the ladder sees it)."""

    scope = "viewer_upload"

    def get_rate(self) -> str:
        return str(getattr(settings, "LADDER_VIEWER_UPLOAD_RATE", "30/min"))


class ReplayTimelineApi(_TimelineApi):
    """A replay file (`.json.gz`, or plain JSON) in, its timeline out: the standalone viewer.

    Send the file as the request body (`Content-Type: application/gzip`) or as the
    multipart field `replay`. A file that does not verify gets 422 with the first
    difference and the timeline up to it.
    """

    parser_classes = [StrictMultiPartParser]
    throttle_classes = [*api_settings.DEFAULT_THROTTLE_CLASSES, UploadThrottle]  # type: ignore[list-item]

    @extend_schema(
        request={
            "application/gzip": OpenApiTypes.BINARY,
            "multipart/form-data": {
                "type": "object",
                "properties": {"replay": {"type": "string", "format": "binary"}},
                "required": ["replay"],
            },
        },
        responses={
            200: OpenApiResponse(description="The timeline", response=OpenApiTypes.OBJECT),
            400: ERROR_BODY,
            413: ERROR_BODY,
            422: OpenApiResponse(
                description="The replay does not verify",
                response=OpenApiTypes.OBJECT,
                examples=[
                    OpenApiExample(
                        "tampered",
                        value={
                            "error": "replay_does_not_verify",
                            "detail": "event 100 (MOVE vs MOVE) differs: seat: stored 1, engine 0",
                            "verification": {"ok": False, "decision": 65, "event_index": 100},
                            "timeline": {"format": "digdown-timeline/1"},
                        },
                    )
                ],
            ),
        },
    )
    def post(self, request: Request) -> HttpResponse:
        timeline = timeline_of_bytes(_uploaded_bytes(request))
        if not timeline.ok:
            return does_not_verify_response(timeline)
        return timeline_response(request, timeline)


def _uploaded_bytes(request: Request) -> bytes:
    """The replay file of an upload, refused beyond the size limit before it is read."""
    limit = upload_max_bytes()
    too_large = ReplayTooLarge(f"a replay file may be at most {limit} bytes")
    try:
        declared = int(request.headers.get("Content-Length") or 0)
    except ValueError:
        declared = 0
    if declared > limit + 64 * 1024:  # multipart framing is small
        raise too_large
    if (request.content_type or "").startswith("multipart/form-data"):
        upload = request.FILES.get("replay")
        if upload is None:
            raise ViewerError("send the replay file as the request body or the field 'replay'")
        if upload.size is not None and upload.size > limit:
            raise too_large
        return upload.read(limit + 1)
    stream = request.stream
    data = stream.read(limit + 1) if stream is not None else b""
    if len(data) > limit:
        raise too_large
    return data


def standalone_page(request: HttpRequest) -> HttpResponse:
    """Open a replay file from disk: drop it on the page or pick it."""
    return render(request, "viewer/standalone.html", {"nav": "replays"})


def match_page(request: HttpRequest, match_id: int) -> HttpResponse:
    """A match's replay, step by step (once the match is finished)."""
    try:
        match = match_detail(match_id=match_id)
    except NotFound:
        raise Http404("no such match") from None
    return render(request, "viewer/match.html", {"match": match, "reveal": match_reveal(match)})


@never_cache
def live_json(request: HttpRequest, match_id: int) -> JsonResponse:
    """A running match's public view, a few decisions behind (or why there is none)."""
    try:
        match = match_detail(match_id=match_id)
    except NotFound:
        raise Http404("no such match") from None
    return JsonResponse(live_view(match=match))


def live_page(request: HttpRequest, match_id: int) -> HttpResponse:
    """Watch a running match in the viewer; its full replay follows when it ends."""
    try:
        match = match_detail(match_id=match_id)
    except NotFound:
        raise Http404("no such match") from None
    return render(request, "viewer/live.html", {"match": match})
