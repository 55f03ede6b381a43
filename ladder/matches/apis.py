"""REST API of matches and tournaments: list, detail, challenge, cancel, replay download.

Thin views (HackSoft style) over the matches' services (``challenges``, ``claims``) and
``.selectors``.
Match lists are keyset-paginated newest first (``cursor``; no total count, so a
deep page costs what the first does). A match's seed and result stay hidden
until it is finished: the seed determines the whole dealt cave.
"""

from __future__ import annotations

from typing import Any, TypedDict, cast

from django.http import FileResponse, HttpResponse, HttpResponseBase
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from digdown.types import Result
from ladder.accounts.requests import request_user
from ladder.bots.apis import LADDER_HELP
from ladder.common.exceptions import NotFound
from ladder.common.fields import MAX_ID, IdField, PointsField
from ladder.common.logs import log_read, log_response
from ladder.common.pagination import NewestFirstPagination
from ladder.common.rest_parsers import BoundedJSONParser
from ladder.common.schema import ERRORS
from ladder.common.serializers import StrictInputSerializer
from ladder.ladders import Difficulty
from ladder.matches import bot_selectors, selectors
from ladder.matches.challenges import challenge_create
from ladder.matches.claims import match_cancel
from ladder.matches.models import Match, MatchResult, MatchSeat
from ladder.matches.replays import replay_open


class SeatOutputSerializer(serializers.Serializer):
    seat = serializers.IntegerField()
    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField()
    version = serializers.IntegerField(source="version_number")
    rank = serializers.IntegerField(allow_null=True)
    score = serializers.IntegerField(allow_null=True)
    faults = serializers.IntegerField()
    ended = serializers.ChoiceField(choices=MatchSeat.Ended.choices, allow_blank=True)
    forfeit_reason = serializers.CharField()
    rating_before = PointsField(allow_null=True)
    rating_after = PointsField(allow_null=True)
    rating_delta = PointsField(allow_null=True)


class SeatListSerializer(serializers.ListSerializer):
    """A match's seats as ``SeatOutputSerializer`` writes each, read from the prefetched
    list: DRF's walk (``seats.all`` cloned the queryset and inspected its signature per
    match, then every field's source per seat) was most of a match list's CPU."""

    def get_attribute(self, instance: Match) -> Any:
        prefetched = getattr(instance, "_prefetched_objects_cache", {}).get("seats")
        return instance.seats.all() if prefetched is None else prefetched

    def to_representation(self, data: Any) -> list[dict[str, Any]]:
        # As Serializer.to_representation does it, for fields that each read one attribute.
        child = self.child
        if not isinstance(child, serializers.Serializer):
            return super().to_representation(data)
        readable = list(child._readable_fields)
        if any(len(f.source_attrs) != 1 for f in readable):
            return super().to_representation(data)
        fields = [
            (cast(str, f.field_name), f.source_attrs[0], f.to_representation) for f in readable
        ]
        return [
            {name: None if (v := getattr(seat, source)) is None else out(v)
             for name, source, out in fields}
            for seat in data
        ]  # fmt: skip


def _finished_result(match: Match) -> MatchResult | None:
    if match.status != Match.Status.FINISHED:
        return None
    result: MatchResult | None = getattr(match, "result", None)
    return result


class _WholeMatchField(serializers.Field):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(read_only=True, source="*", **kwargs)


@extend_schema_field({"type": "string", "nullable": True, "pattern": "^[0-9]+$"})
class SeedField(_WholeMatchField):
    """64-bit, as a string so JavaScript keeps every digit; null until the match is finished
    (and no other match still plays the same deal: ``selectors.match_reveal``)."""

    def to_representation(self, match: Match) -> str | None:
        seed = selectors.match_reveal(match).seed
        return None if seed is None else str(seed)


class DealMatchSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    rotation = serializers.IntegerField(source="deal_rotation")
    status = serializers.ChoiceField(choices=Match.Status.choices)


class MatchDealSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    rotation = serializers.IntegerField(help_text="this match's seat rotation in the deal")
    matches = DealMatchSerializer(many=True, help_text="every match of the deal, by rotation")


@extend_schema_field(MatchDealSerializer(allow_null=True))
class DealField(_WholeMatchField):
    """The duplicate deal the match belongs to (its siblings by rotation); null if none."""

    def to_representation(self, match: Match) -> dict[str, Any] | None:
        if match.deal_id is None:
            return None
        return MatchDealSerializer(
            {
                "id": match.deal_id,
                "rotation": match.deal_rotation,
                "matches": match.deal.matches.all(),  # type: ignore[union-attr]
            }
        ).data


@extend_schema_field({"type": "object", "additionalProperties": {}, "nullable": True})
class ResultField(_WholeMatchField):
    """The engine's Result (docs/engine-api.md) of a finished match; null before."""

    def to_representation(self, match: Match) -> Result | None:
        result = _finished_result(match)
        return None if result is None else cast(Result, result.data)


@extend_schema_field({"type": "integer", "nullable": True})
class RecordedField(_WholeMatchField):
    """The recording sequence number of a finished match (orders rating changes)."""

    def to_representation(self, match: Match) -> int | None:
        result = _finished_result(match)
        return None if result is None else result.pk


class ReplayOutputSerializer(serializers.Serializer):
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    url = serializers.URLField()


class ReplayLink(TypedDict):
    """Where a replay is (ReplayOutputSerializer's fields)."""

    sha256: str
    size: int
    url: str


@extend_schema_field(ReplayOutputSerializer(allow_null=True))
class ReplayField(_WholeMatchField):
    """Where to download the replay (needs ``request`` in the context); null without one,
    and while the seed is hidden (``selectors.match_reveal``)."""

    def to_representation(self, match: Match) -> ReplayLink | None:
        replay = selectors.match_reveal(match).replay
        if replay is None:
            return None  # none yet, or its deal's other rotations still to play this cave
        url = reverse("match-replay", kwargs={"match_id": match.pk})
        request = self.context.get("request")
        return {
            "sha256": replay.sha256,
            "size": replay.size,
            "url": request.build_absolute_uri(url) if request else url,
        }


@extend_schema_field(
    {
        "type": "array",
        "items": {"type": "integer", "minimum": 1, "maximum": MAX_ID},
        "minItems": 1,
        "maxItems": 4,
        "uniqueItems": True,
        "description": "bot ids in seat order; a bot takes one seat. One bot (yours):"
        " the ladder picks `seats - 1` opponents nearest in rating that can play now",
    }
)
class SeatBotsField(serializers.ListField):
    """The bots of a challenge, in seat order: distinct (the service says so too)."""

    def to_internal_value(self, data: Any) -> list[int]:
        ids: list[int] = super().to_internal_value(data)
        if len(set(ids)) != len(ids):
            raise serializers.ValidationError("a bot cannot take two seats")
        return ids


class MatchOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Match.Status.choices)
    ladder = serializers.CharField(help_text="ladder whose ratings it changes; empty: off-ladder")
    ruleset = serializers.CharField()
    seed = SeedField()
    difficulty = serializers.ChoiceField(choices=Difficulty.choices)
    rated = serializers.BooleanField()
    tournament = serializers.IntegerField(source="tournament_id", allow_null=True)
    tournament_round = serializers.IntegerField(allow_null=True)
    deal = DealField()
    attempts = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField()
    result = ResultField()
    recorded = RecordedField()
    replay = ReplayField()
    seats = SeatListSerializer(child=SeatOutputSerializer(), source="seats.all")


def match_out(match: Match, request: Request) -> Any:
    return MatchOutputSerializer(match, context={"request": request}).data


class BotMatchesPagination(NewestFirstPagination):
    """``NewestFirstPagination`` over a bot's seats (``bot_selectors.bot_match_seats``):
    ordered by their match id, so its cursors are the match list's own."""

    ordering = "-match_id"


class MatchListApi(APIView):
    """Matches newest first (filter by bot, status, tournament, ladder); request a challenge
    (``challenge_create``: the bots named, or one of yours and opponents the ladder picks)."""

    pagination_class = NewestFirstPagination  # the list's page shape, in the schema too
    # A challenge is JSON: a form's strings ("0", "off") would pass for the booleans the
    # schema promises, so the schema and the parser say the same thing.
    parser_classes = [BoundedJSONParser]

    class FilterSerializer(serializers.Serializer):
        bot = IdField(required=False, allow_null=True, default=None)
        status = serializers.ChoiceField(choices=Match.Status.choices, required=False, default="")
        tournament = IdField(required=False, allow_null=True, default=None)
        ladder = serializers.CharField(required=False, default="", max_length=32)

    class InputSerializer(StrictInputSerializer):
        bots = SeatBotsField(child=IdField(), min_length=1, max_length=4)
        seats = serializers.IntegerField(
            required=False,
            allow_null=True,
            default=None,
            min_value=2,
            max_value=4,
            help_text="seats of the match; default: one per bot named, 2 if only one is",
        )
        ladder = serializers.CharField(
            required=False, default="", allow_blank=True, max_length=32, help_text=LADDER_HELP
        )
        difficulty = serializers.ChoiceField(
            choices=Difficulty.choices,
            required=False,
            help_text="default: the ladder's; another one is played on the ladder that rates it",
        )
        rated = serializers.BooleanField(required=False, default=True)

    @extend_schema(
        parameters=[FilterSerializer], responses={200: MatchOutputSerializer(many=True), **ERRORS}
    )
    def get(self, request: Request) -> Response:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        d = f.validated_data
        if d["bot"] is not None:
            return self._bot_page(request, d)
        qs = selectors.match_list(
            bot_id=d["bot"],
            status=d["status"],
            tournament_id=d["tournament"],
            ladder=d["ladder"],
            seats=False,
        )
        paginator = self.pagination_class()
        page = selectors.with_seat_rows(paginator.paginate_queryset(qs, request, view=self) or [])
        data = MatchOutputSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)

    def _bot_page(self, request: Request, d: dict[str, Any]) -> Response:
        """One bot's matches: the page's ids a range of its seats' index from the cursor
        (``bot_selectors``), then those matches; the cursor is the same as the list's."""
        paginator = BotMatchesPagination()
        seats = bot_selectors.bot_match_seats(
            bot_id=d["bot"], status=d["status"], tournament_id=d["tournament"], ladder=d["ladder"]
        )
        rows = paginator.paginate_queryset(seats, request, view=self) or []
        page = bot_selectors.matches_of_seats(rows)
        data = MatchOutputSerializer(page, many=True, context={"request": request}).data
        return paginator.get_paginated_response(data)

    @extend_schema(request=InputSerializer, responses={201: MatchOutputSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        match = challenge_create(
            user=request_user(request),
            bot_ids=d["bots"],
            seats=d["seats"],
            ladder=d["ladder"] or None,
            difficulty=d.get("difficulty"),
            rated=d["rated"],
        )
        return Response(
            match_out(selectors.match_detail(match_id=match.pk), request),
            status=status.HTTP_201_CREATED,
        )


class MatchDetailApi(APIView):
    """One match with its seats, result and rating changes."""

    @extend_schema(responses={200: MatchOutputSerializer, 404: ERRORS[404]})
    def get(self, request: Request, match_id: int) -> Response:
        return Response(match_out(selectors.match_detail(match_id=match_id), request))


class MatchCancelApi(APIView):
    """Staff: cancel a queued or running match."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(StrictInputSerializer):
        reason = serializers.CharField(
            max_length=500,
            required=False,
            default="",
            allow_blank=True,
            help_text="empty: cancelled",
        )

    @extend_schema(request=InputSerializer, responses={200: MatchOutputSerializer, **ERRORS})
    def post(self, request: Request, match_id: int) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        match_cancel(match_id=match_id, user=request_user(request), **s.validated_data)
        return Response(match_out(selectors.match_detail(match_id=match_id), request))


class MatchReplayApi(APIView):
    """Download the gzip'd JSON replay: always an attachment, never rendered inline."""

    @extend_schema(
        responses={
            (200, "application/gzip"): OpenApiTypes.BINARY,
            304: OpenApiResponse(description="If-None-Match matched the sha256 ETag"),
            404: ERRORS[404],
            409: OpenApiResponse(ERRORS[409].response, "another match still plays the same deal"),
        },
        parameters=[
            OpenApiParameter("If-None-Match", str, OpenApiParameter.HEADER, required=False)
        ],
    )
    def get(self, request: Request, match_id: int) -> HttpResponseBase:
        replay = selectors.match_replay_file(match_id=match_id)
        etag = f'"{replay.sha256}"'
        response: HttpResponseBase
        if etag in [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]:
            response = HttpResponse(status=304)
        else:
            try:
                fh = replay_open(replay.name)
            except FileNotFoundError as exc:
                raise NotFound(f"the replay file of match {match_id} is missing") from exc
            response = FileResponse(
                fh,
                as_attachment=True,
                filename=f"digdown-match-{match_id}.json.gz",
                content_type="application/gzip",
            )
            response["Content-Length"] = str(replay.size)
        response["ETag"] = etag
        response["X-Content-Type-Options"] = "nosniff"
        response["Cache-Control"] = "public, max-age=31536000, immutable"
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        return response


class SeatLogApi(APIView):
    """What a hosted bot wrote (stdout+stderr, capped at 64 KiB) during one match.

    The bot's owner and staff only (the selector enforces it); sent as inert text.
    """

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
        found = selectors.match_seat_log_for_owner(
            user=request_user(request), match_id=match_id, seat=seat
        )
        return log_response(log_read(found.log.name))
