"""REST API (v1): thin views with nested Input/Output serializers that call services/selectors.

Ratings are shown in Elo points (stored hundredths / 100). Authorization is in the
services; views only require authentication for writes.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import FileResponse, HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import IsAuthenticated, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.accounts.models import ApiToken
from ladder.accounts.services import token_create, token_revoke
from ladder.api.authentication import ApiTokenAuthentication, BasicAuthentication
from ladder.api.pagination import Pagination
from ladder.bots import selectors as bot_selectors
from ladder.bots import services as bot_services
from ladder.bots.models import Bot, BotVersion
from ladder.common.exceptions import NotFound
from ladder.matches import selectors as match_selectors
from ladder.matches import services as match_services
from ladder.matches.models import Match, MatchSeat, Tournament
from ladder.matches.replays import replay_open
from ladder.ratings import selectors as rating_selectors
from ladder.ratings.elo import SCALE


def points(value: int | None) -> float | None:
    return None if value is None else value / SCALE


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField()
    detail = serializers.CharField()


ERRORS = {
    400: OpenApiResponse(ErrorSerializer, "invalid input"),
    401: OpenApiResponse(ErrorSerializer, "missing or invalid token"),
    403: OpenApiResponse(ErrorSerializer, "not allowed"),
    404: OpenApiResponse(ErrorSerializer, "not found"),
    409: OpenApiResponse(ErrorSerializer, "state conflict"),
}


def paginate(view: APIView, request: Request, qs: Any, serialize: Any) -> Response:
    paginator = Pagination()
    page = paginator.paginate_queryset(qs, request, view=view)
    return paginator.get_paginated_response([serialize(o) for o in page])


class RatingFields(serializers.Serializer):
    rating = serializers.FloatField()
    games = serializers.IntegerField()
    provisional = serializers.BooleanField()
    interval95 = serializers.ListField(child=serializers.FloatField(), allow_null=True)


def rating_fields(bot: Bot) -> dict[str, Any]:
    u = rating_selectors.rating_uncertainty(rating=bot.rating, games=bot.games)
    return {
        "rating": points(bot.rating),
        "games": bot.games,
        "provisional": u.provisional,
        "interval95": list(u.interval95) if u.interval95 else None,
    }


class BotOut(RatingFields):
    id = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField()
    kind = serializers.CharField()
    description = serializers.CharField()
    is_active = serializers.BooleanField()
    suspended_reason = serializers.CharField()
    retired = serializers.BooleanField()
    created_at = serializers.DateTimeField()


def bot_out(bot: Bot) -> dict[str, Any]:
    return BotOut(
        {
            "id": bot.pk,
            "name": bot.name,
            "owner": bot.owner.username,
            "kind": bot.kind,
            "description": bot.description,
            "is_active": bot.is_active,
            "suspended_reason": bot.suspended_reason,
            "retired": bot.retired_at is not None,
            "created_at": bot.created_at,
            **rating_fields(bot),
        }
    ).data


class VersionOut(serializers.Serializer):
    number = serializers.IntegerField()
    kind = serializers.CharField()
    sha256 = serializers.CharField()
    size = serializers.IntegerField()
    entry_point = serializers.CharField()
    endpoint = serializers.CharField(required=False, help_text="owner and staff only")
    validation_log = serializers.CharField(required=False, help_text="owner and staff only")
    created_at = serializers.DateTimeField()


def version_out(v: BotVersion, *, private: bool) -> dict[str, Any]:
    data: dict[str, Any] = {
        "number": v.number,
        "kind": "endpoint" if v.endpoint else "source",
        "sha256": v.archive_sha256,
        "size": v.archive_size,
        "entry_point": v.entry_point,
        "created_at": v.created_at,
    }
    if private:
        data["endpoint"] = v.endpoint
        data["validation_log"] = v.validation_log
    return VersionOut(data).data


def can_see_private(request: Request, bot: Bot) -> bool:
    user = request.user
    return bool(user and user.is_authenticated and (user.is_staff or user.pk == bot.owner_id))


# --- leaderboard ------------------------------------------------------------------


class LeaderboardApi(APIView):
    """Active bots by rating; provisional bots are marked."""

    class FilterSerializer(serializers.Serializer):
        kind = serializers.ChoiceField(choices=Bot.Kind.choices, required=False)
        owner = serializers.CharField(required=False)
        search = serializers.CharField(required=False)
        provisional = serializers.BooleanField(required=False, allow_null=True, default=None)
        include_inactive = serializers.BooleanField(required=False, default=False)

    class OutputSerializer(BotOut):
        position = serializers.IntegerField()

    @extend_schema(parameters=[FilterSerializer], responses={200: OutputSerializer(many=True)})
    def get(self, request: Request) -> Response:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        qs = rating_selectors.leaderboard_list(**f.validated_data)
        paginator = Pagination()
        page = paginator.paginate_queryset(qs, request, view=self)
        offset = (paginator.page.number - 1) * paginator.page.paginator.per_page
        rows = [{"position": offset + i + 1, **bot_out(b)} for i, b in enumerate(page)]
        return paginator.get_paginated_response(rows)


# --- bots -------------------------------------------------------------------------


class BotListCreateApi(APIView):
    """List bots or create one (the caller becomes its owner)."""

    class FilterSerializer(serializers.Serializer):
        mine = serializers.BooleanField(required=False, default=False)
        search = serializers.CharField(required=False, default="")
        kind = serializers.ChoiceField(choices=Bot.Kind.choices, required=False, default="")

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=32)
        kind = serializers.ChoiceField(choices=Bot.Kind.choices)
        description = serializers.CharField(
            max_length=500, required=False, default="", allow_blank=True
        )
        endpoint = serializers.CharField(max_length=300, required=False, allow_blank=True)

    @extend_schema(parameters=[FilterSerializer], responses={200: BotOut(many=True)})
    def get(self, request: Request) -> Response:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        owner = request.user if f.validated_data["mine"] and request.user.is_authenticated else None
        if f.validated_data["mine"] and owner is None:
            return Response(
                {"error": "not_authenticated", "detail": "mine=true needs a token"}, status=401
            )
        qs = bot_selectors.bot_list(
            owner=owner, search=f.validated_data["search"], kind=f.validated_data["kind"]
        )
        return paginate(self, request, qs, bot_out)

    @extend_schema(request=InputSerializer, responses={201: BotOut, **ERRORS})
    def post(self, request: Request) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        bot = bot_services.bot_create(owner=request.user, **s.validated_data)
        return Response(bot_out(bot), status=status.HTTP_201_CREATED)


class BotDetailApi(APIView):
    """One bot with versions and rating history; the owner may change or delete it."""

    class InputSerializer(serializers.Serializer):
        description = serializers.CharField(max_length=500, required=False, allow_blank=True)

    class HistorySerializer(serializers.Serializer):
        match = serializers.IntegerField()
        recorded = serializers.IntegerField(help_text="recording sequence number")
        rank = serializers.IntegerField(allow_null=True)
        rating_before = serializers.FloatField()
        rating_after = serializers.FloatField()
        delta = serializers.FloatField()
        at = serializers.DateTimeField()

    class OutputSerializer(BotOut):
        latest_version = VersionOut(allow_null=True)
        rating_history = serializers.ListField(child=serializers.DictField())

    @extend_schema(responses={200: OutputSerializer, 404: ERRORS[404]})
    def get(self, request: Request, bot_id: int) -> Response:
        bot = bot_selectors.bot_get(bot_id=bot_id)
        latest = bot_selectors.bot_latest_version(bot=bot)
        history = [
            self.HistorySerializer(
                {
                    "match": s.match_id,
                    "recorded": s.match.result.pk,
                    "rank": s.rank,
                    "rating_before": points(s.rating_before),
                    "rating_after": points(s.rating_after),
                    "delta": points((s.rating_after or 0) - (s.rating_before or 0)),
                    "at": s.match.result.recorded_at,
                }
            ).data
            for s in rating_selectors.bot_rating_history(bot_id=bot.pk)
        ]
        private = can_see_private(request, bot)
        return Response(
            {
                **bot_out(bot),
                "latest_version": version_out(latest, private=private) if latest else None,
                "rating_history": history,
            }
        )

    @extend_schema(request=InputSerializer, responses={200: BotOut, **ERRORS})
    def patch(self, request: Request, bot_id: int) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        bot = bot_services.bot_update(user=request.user, bot_id=bot_id, **s.validated_data)
        return Response(bot_out(bot))

    @extend_schema(responses={204: None, **ERRORS})
    def delete(self, request: Request, bot_id: int) -> Response:
        bot_services.bot_delete(user=request.user, bot_id=bot_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class BotVersionsApi(APIView):
    """A bot's versions; the owner of a hosted bot uploads a new one (.py or .zip, ≤ 1 MiB)."""

    class InputSerializer(serializers.Serializer):
        file = serializers.FileField()
        entry_point = serializers.CharField(required=False, allow_blank=True, max_length=255)

    @extend_schema(responses={200: VersionOut(many=True), 404: ERRORS[404]})
    def get(self, request: Request, bot_id: int) -> Response:
        bot = bot_selectors.bot_get(bot_id=bot_id)
        private = can_see_private(request, bot)
        qs = bot_selectors.bot_versions(bot=bot)
        return paginate(self, request, qs, lambda v: version_out(v, private=private))

    @extend_schema(
        request={"multipart/form-data": InputSerializer}, responses={201: VersionOut, **ERRORS}
    )
    def post(self, request: Request, bot_id: int) -> Response:
        limit = settings.LADDER_UPLOAD_MAX_BYTES
        declared = request.META.get("CONTENT_LENGTH") or "0"
        if declared.isdigit() and int(declared) > limit + 64 * 1024:
            # Refuse before the multipart parser spools a huge body to disk.
            return Response(
                {"error": "too_large", "detail": f"uploads are limited to {limit} bytes"},
                status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
            )
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        upload = s.validated_data["file"]
        # One byte past the limit is enough for the service to report the size.
        data = upload.read(limit + 1)
        version = bot_services.bot_version_upload(
            user=request.user,
            bot_id=bot_id,
            filename=upload.name or "upload",
            data=data,
            entry_point=s.validated_data.get("entry_point") or None,
        )
        return Response(version_out(version, private=True), status=status.HTTP_201_CREATED)


class BotEndpointApi(APIView):
    """Register a remote bot's endpoint (a new version)."""

    class InputSerializer(serializers.Serializer):
        endpoint = serializers.CharField(max_length=300)

    @extend_schema(request=InputSerializer, responses={201: VersionOut, **ERRORS})
    def put(self, request: Request, bot_id: int) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        version = bot_services.bot_set_endpoint(
            user=request.user, bot_id=bot_id, endpoint=s.validated_data["endpoint"]
        )
        return Response(version_out(version, private=True), status=status.HTTP_201_CREATED)


class BotSuspendApi(APIView):
    """Staff: suspend a bot with a reason."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        reason = serializers.CharField(max_length=500)

    @extend_schema(request=InputSerializer, responses={200: BotOut, **ERRORS})
    def post(self, request: Request, bot_id: int) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        bot = bot_services.bot_suspend(user=request.user, bot_id=bot_id, **s.validated_data)
        return Response(bot_out(bot))


class BotUnsuspendApi(APIView):
    """Staff: reactivate a suspended bot."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: BotOut, **ERRORS})
    def post(self, request: Request, bot_id: int) -> Response:
        return Response(bot_out(bot_services.bot_unsuspend(user=request.user, bot_id=bot_id)))


# --- matches ----------------------------------------------------------------------


class SeatOut(serializers.Serializer):
    seat = serializers.IntegerField()
    bot = serializers.IntegerField()
    bot_name = serializers.CharField()
    version = serializers.IntegerField()
    rank = serializers.IntegerField(allow_null=True)
    score = serializers.IntegerField(allow_null=True)
    faults = serializers.IntegerField()
    ended = serializers.CharField()
    forfeit_reason = serializers.CharField()
    rating_before = serializers.FloatField(allow_null=True)
    rating_after = serializers.FloatField(allow_null=True)
    rating_delta = serializers.FloatField(allow_null=True)


def seat_out(s: MatchSeat) -> dict[str, Any]:
    return SeatOut(
        {
            "seat": s.seat,
            "bot": s.bot_id,
            "bot_name": s.bot.name,
            "version": s.version.number,
            "rank": s.rank,
            "score": s.score,
            "faults": s.faults,
            "ended": s.ended,
            "forfeit_reason": s.forfeit_reason,
            "rating_before": points(s.rating_before),
            "rating_after": points(s.rating_after),
            "rating_delta": points(s.rating_delta),
        }
    ).data


class MatchOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField()
    ruleset = serializers.CharField()
    seed = serializers.CharField(help_text="64-bit; a string so JavaScript keeps every digit")
    difficulty = serializers.CharField()
    rated = serializers.BooleanField()
    tournament = serializers.IntegerField(allow_null=True)
    attempts = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    error = serializers.CharField()
    result = serializers.DictField(allow_null=True)
    recorded = serializers.IntegerField(allow_null=True, help_text="recording sequence number")
    replay = serializers.DictField(allow_null=True)
    seats = SeatOut(many=True)


def match_out(m: Match, request: Request) -> dict[str, Any]:
    result = getattr(m, "result", None) if m.status == Match.Status.FINISHED else None
    replay = None
    if m.replay_sha256:
        replay = {
            "sha256": m.replay_sha256,
            "size": m.replay_size,
            "url": request.build_absolute_uri(f"/api/v1/matches/{m.pk}/replay/"),
        }
    return MatchOut(
        {
            "id": m.pk,
            "status": m.status,
            "ruleset": m.ruleset,
            "seed": str(m.seed),
            "difficulty": m.difficulty,
            "rated": m.rated,
            "tournament": m.tournament_id,
            "attempts": m.attempts,
            "created_at": m.created_at,
            "started_at": m.started_at,
            "finished_at": m.finished_at,
            "error": m.error,
            "result": result.data if result else None,
            "recorded": result.pk if result else None,
            "replay": replay,
            "seats": [seat_out(s) for s in m.seats.all()],
        }
    ).data


class MatchListCreateApi(APIView):
    """Matches (filter by bot, status, tournament); request a challenge match."""

    class FilterSerializer(serializers.Serializer):
        bot = serializers.IntegerField(required=False, allow_null=True, default=None)
        status = serializers.ChoiceField(choices=Match.Status.choices, required=False, default="")
        tournament = serializers.IntegerField(required=False, allow_null=True, default=None)

    class InputSerializer(serializers.Serializer):
        bots = serializers.ListField(child=serializers.IntegerField(), min_length=2, max_length=4)
        difficulty = serializers.ChoiceField(choices=Match.Difficulty.choices, default="normal")

    @extend_schema(parameters=[FilterSerializer], responses={200: MatchOut(many=True)})
    def get(self, request: Request) -> Response:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        d = f.validated_data
        qs = match_selectors.match_list(
            bot_id=d["bot"], status=d["status"], tournament_id=d["tournament"]
        )
        return paginate(self, request, qs, lambda m: match_out(m, request))

    @extend_schema(request=InputSerializer, responses={201: MatchOut, **ERRORS})
    def post(self, request: Request) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        match = match_services.match_create(
            bot_ids=s.validated_data["bots"],
            requested_by=request.user,
            difficulty=s.validated_data["difficulty"],
        )
        return Response(
            match_out(match_selectors.match_detail(match_id=match.pk), request),
            status=status.HTTP_201_CREATED,
        )


class MatchDetailApi(APIView):
    """One match with its seats, result and rating changes."""

    @extend_schema(responses={200: MatchOut, 404: ERRORS[404]})
    def get(self, request: Request, match_id: int) -> Response:
        return Response(match_out(match_selectors.match_detail(match_id=match_id), request))


class MatchCancelApi(APIView):
    """Staff: cancel a queued or running match."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        reason = serializers.CharField(max_length=500, required=False, default="")

    @extend_schema(request=InputSerializer, responses={200: MatchOut, **ERRORS})
    def post(self, request: Request, match_id: int) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        match_services.match_cancel(match_id=match_id, user=request.user, **s.validated_data)
        return Response(match_out(match_selectors.match_detail(match_id=match_id), request))


class MatchReplayApi(APIView):
    """Download the gzip'd JSON replay: always an attachment, never rendered inline."""

    @extend_schema(
        responses={
            (200, "application/gzip"): OpenApiTypes.BINARY,
            304: OpenApiResponse(description="If-None-Match matched the sha256 ETag"),
            404: ERRORS[404],
        },
        parameters=[
            OpenApiParameter("If-None-Match", str, OpenApiParameter.HEADER, required=False)
        ],
    )
    def get(self, request: Request, match_id: int) -> HttpResponse:
        match = (
            Match.objects.filter(pk=match_id)
            .only("pk", "replay", "replay_sha256", "replay_size")
            .first()
        )
        if match is None or not match.replay_sha256 or not match.replay.name:
            raise NotFound("this match has no replay")
        etag = f'"{match.replay_sha256}"'
        if etag in [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]:
            response = HttpResponse(status=304)
        else:
            response = FileResponse(
                replay_open(match.replay.name),
                as_attachment=True,
                filename=f"digdown-match-{match.pk}.json.gz",
                content_type="application/gzip",
            )
            response["Content-Length"] = str(match.replay_size)
        response["ETag"] = etag
        response["X-Content-Type-Options"] = "nosniff"
        response["Cache-Control"] = "public, max-age=31536000, immutable"
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        return response


# --- tokens -----------------------------------------------------------------------


class TokenOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField()
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)


def token_out(t: ApiToken) -> dict[str, Any]:
    return TokenOut(
        {
            "id": t.pk,
            "name": t.name,
            "prefix": t.prefix,
            "created_at": t.created_at,
            "last_used_at": t.last_used_at,
            "revoked_at": t.revoked_at,
        }
    ).data


class TokenListCreateApi(APIView):
    """The caller's tokens; create one (its secret is in this response only).

    Also accepts HTTP Basic (username/password) so a first token can be created.
    """

    authentication_classes = [ApiTokenAuthentication, BasicAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=64, required=False, default="", allow_blank=True)

    class CreatedSerializer(TokenOut):
        token = serializers.CharField(help_text="the secret; shown once, store it now")

    @extend_schema(responses={200: TokenOut(many=True), 401: ERRORS[401]})
    def get(self, request: Request) -> Response:
        qs = ApiToken.objects.filter(user=request.user).order_by("-created_at", "-id")
        return paginate(self, request, qs, token_out)

    @extend_schema(request=InputSerializer, responses={201: CreatedSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        created = token_create(user=request.user, name=s.validated_data["name"])
        return Response(
            {**token_out(created.token), "token": created.secret}, status=status.HTTP_201_CREATED
        )


class TokenRevokeApi(APIView):
    """Revoke one of the caller's tokens (effective immediately)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={204: None, **ERRORS})
    def delete(self, request: Request, token_id: int) -> Response:
        token_revoke(user=request.user, token_id=token_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- tournaments ------------------------------------------------------------------


class TournamentListApi(APIView):
    """Tournaments with their participants (formats and standings: a later issue)."""

    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(
        responses={
            200: inline_serializer(
                "Tournament",
                {
                    "id": serializers.IntegerField(),
                    "name": serializers.CharField(),
                    "format": serializers.CharField(),
                    "participants": serializers.ListField(child=serializers.IntegerField()),
                },
                many=True,
            )
        }
    )
    def get(self, request: Request) -> Response:
        qs = Tournament.objects.prefetch_related("participants").order_by("-created_at", "-id")
        return paginate(
            self,
            request,
            qs,
            lambda t: {
                "id": t.pk,
                "name": t.name,
                "format": t.format,
                "participants": [b.pk for b in t.participants.all()],
            },
        )


def _name_nested_components() -> None:
    """Give every nested Input/Output/... serializer a unique OpenAPI component name."""
    for view in list(globals().values()):
        if not (isinstance(view, type) and issubclass(view, APIView) and view is not APIView):
            continue
        for attr in ("InputSerializer", "OutputSerializer", "FilterSerializer",
                     "HistorySerializer", "CreatedSerializer"):  # fmt: skip
            nested = view.__dict__.get(attr)
            if nested is not None:
                name = view.__name__.removesuffix("Api") + attr.removesuffix("Serializer")
                extend_schema_serializer(component_name=name)(nested)


_name_nested_components()
