"""REST API of bots: list, create, detail, change, delete, versions, endpoint, moderation.

Thin views (HackSoft style): an Input/Filter serializer checks the request, one
service or selector call does the work, ``OutputSerializer(obj).data`` shows it.
Ratings are shown in Elo points on one ladder (``?ladder=``, default: the
default ladder). Authorization is in the services.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.accounts.requests import request_user
from ladder.bots import selectors, services
from ladder.bots.models import Bot, BotVersion
from ladder.common.fields import RatingSerializer
from ladder.common.logs import log_read
from ladder.common.pagination import PagePagination
from ladder.common.schema import ERRORS
from ladder.common.serializers import StrictInputSerializer

LADDER_HELP = "ladder key whose ratings are shown (default: the default ladder)"


class BotOutputSerializer(RatingSerializer):
    """A bot with its rating on one ladder."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    owner = serializers.CharField(source="owner.username")
    kind = serializers.ChoiceField(choices=Bot.Kind.choices)
    description = serializers.CharField()
    is_active = serializers.BooleanField()
    suspended_reason = serializers.CharField(
        help_text="why it is not matched (staff's reason, or what its recent matches showed)"
    )
    suspension = serializers.ChoiceField(
        choices=Bot.Suspension.choices,
        help_text="'' active; 'staff' (only staff lift it) or 'auto' (a new valid version or"
        " the owner's POST .../unsuspend/ lifts it)",
    )
    suspended_at = serializers.DateTimeField(allow_null=True)
    retired = serializers.BooleanField(source="is_retired")
    created_at = serializers.DateTimeField()
    ladder = serializers.CharField(source="rating_ladder", help_text="ladder of the rating")


class VersionOutputSerializer(serializers.Serializer):
    """A version as anyone sees it."""

    number = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["source", "endpoint", "connected"])
    version_label = serializers.CharField(
        source="label",
        help_text="a connected bot's version: the label its process named when it connected",
    )
    sha256 = serializers.CharField(source="archive_sha256")
    size = serializers.IntegerField(source="archive_size")
    entry_point = serializers.CharField()
    status = serializers.ChoiceField(
        choices=BotVersion.Status.choices,
        help_text="pending (until its smoke match), valid or invalid; only valid versions play",
    )
    smoke_outcome = serializers.CharField(help_text="what its smoke match showed")
    created_at = serializers.DateTimeField()


class PrivateVersionOutputSerializer(VersionOutputSerializer):
    """A version as its owner and staff see it."""

    endpoint = serializers.CharField(required=False, help_text="owner and staff only")
    validation_log = serializers.CharField(required=False, help_text="owner and staff only")


def versions_out(versions: Any, *, private: bool, many: bool = False) -> Any:
    serializer = PrivateVersionOutputSerializer if private else VersionOutputSerializer
    return serializer(versions, many=many).data


def can_see_private(request: Request, bot: Bot) -> bool:
    user = request.user
    return bool(user and user.is_authenticated and (user.is_staff or user.pk == bot.owner_id))


# What an endpoint looks like (the schema's pattern; ``endpoints.parse_endpoint`` says
# why one is refused). A well-formed one is then resolved and checked (400 if refused).
ENDPOINT_SHAPE = RegexValidator(
    r"^(?:|(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):[0-9]{1,5})$",
    "endpoint must look like host:port ([v6addr]:port for IPv6)",
)


class LadderFilterSerializer(serializers.Serializer):
    ladder = serializers.CharField(required=False, default="", max_length=32, help_text=LADDER_HELP)


class BotListApi(APIView):
    """List bots or create one (the caller becomes its owner)."""

    pagination_class = PagePagination  # the list's page shape, in the schema too

    class FilterSerializer(LadderFilterSerializer):
        mine = serializers.BooleanField(required=False, default=False)
        search = serializers.CharField(required=False, default="", max_length=100)
        kind = serializers.ChoiceField(choices=Bot.Kind.choices, required=False, default="")

    class InputSerializer(StrictInputSerializer):
        name = serializers.CharField(max_length=32)
        kind = serializers.ChoiceField(choices=Bot.Kind.choices)
        description = serializers.CharField(
            max_length=500, required=False, default="", allow_blank=True
        )
        endpoint = serializers.CharField(
            max_length=300,
            required=False,
            allow_blank=True,
            validators=[ENDPOINT_SHAPE],
            help_text="remote bots only: host:port ([v6addr]:port); empty for hosted bots",
        )

    @extend_schema(
        parameters=[FilterSerializer],
        responses={200: BotOutputSerializer(many=True), 401: ERRORS[401], 404: ERRORS[404]},
    )
    def get(self, request: Request) -> Response:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        d = f.validated_data
        qs = selectors.bot_list(
            owner=request_user(request) if d["mine"] else None,
            search=d["search"],
            kind=d["kind"],
            ladder=d["ladder"],
        )
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(BotOutputSerializer(page, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: BotOutputSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        bot = services.bot_create(owner=request_user(request), **s.validated_data)
        return Response(
            BotOutputSerializer(selectors.bot_get(bot_id=bot.pk)).data,
            status=status.HTTP_201_CREATED,
        )


@extend_schema_field(PrivateVersionOutputSerializer)
class VersionField(serializers.Field):
    """A version, with the private fields when the serializer's context says ``private``."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(read_only=True, **kwargs)

    def to_representation(self, value: BotVersion) -> Any:
        return versions_out(value, private=self.context.get("private", False))


class BotDetailApi(APIView):
    """One bot with its current version and its rating on every ladder; the owner may
    change or delete it. Its rating history is ``/bots/{id}/rating-history/``."""

    class InputSerializer(StrictInputSerializer):
        description = serializers.CharField(max_length=500, required=False, allow_blank=True)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if not attrs:  # an empty (or unreadable) body changes nothing: say so
                raise serializers.ValidationError("nothing to change: send description")
            return attrs

    class OutputSerializer(BotOutputSerializer):
        class LadderRatingSerializer(RatingSerializer):
            ladder = serializers.CharField()

        latest_version = VersionField(source="current_version", allow_null=True)
        ratings = LadderRatingSerializer(
            many=True, source="ratings.all", help_text="the bot's rating on each ladder"
        )

    @extend_schema(
        parameters=[LadderFilterSerializer], responses={200: OutputSerializer, 404: ERRORS[404]}
    )
    def get(self, request: Request, bot_id: int) -> Response:
        f = LadderFilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        bot = selectors.bot_detail(bot_id=bot_id, **f.validated_data)
        context = {"private": can_see_private(request, bot)}
        return Response(self.OutputSerializer(bot, context=context).data)

    @extend_schema(request=InputSerializer, responses={200: BotOutputSerializer, **ERRORS})
    def patch(self, request: Request, bot_id: int) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        services.bot_update(user=request_user(request), bot_id=bot_id, **s.validated_data)
        return Response(BotOutputSerializer(selectors.bot_get(bot_id=bot_id)).data)

    @extend_schema(responses={204: None, **ERRORS})
    def delete(self, request: Request, bot_id: int) -> Response:
        services.bot_delete(user=request_user(request), bot_id=bot_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class BotVersionsApi(APIView):
    """A bot's versions; the owner of a hosted bot uploads a new one (.py or .zip, ≤ 1 MiB)."""

    pagination_class = PagePagination  # the list's page shape, in the schema too

    class InputSerializer(StrictInputSerializer):
        file = serializers.FileField()
        entry_point = serializers.CharField(required=False, allow_blank=True, max_length=255)

    @extend_schema(
        responses={200: PrivateVersionOutputSerializer(many=True), 404: ERRORS[404]},
    )
    def get(self, request: Request, bot_id: int) -> Response:
        bot = selectors.bot_get(bot_id=bot_id)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(selectors.bot_versions(bot=bot), request, view=self)
        return paginator.get_paginated_response(
            versions_out(page, private=can_see_private(request, bot), many=True)
        )

    @extend_schema(
        request={"multipart/form-data": InputSerializer},
        responses={201: PrivateVersionOutputSerializer, **ERRORS},
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
        version: BotVersion = services.bot_version_upload(
            user=request_user(request),
            bot_id=bot_id,
            filename=upload.name or "upload",
            data=data,
            entry_point=s.validated_data.get("entry_point") or None,
        )
        return Response(versions_out(version, private=True), status=status.HTTP_201_CREATED)


class BotEndpointApi(APIView):
    """Register a remote bot's endpoint (a new version)."""

    class InputSerializer(StrictInputSerializer):
        endpoint = serializers.CharField(max_length=300, validators=[ENDPOINT_SHAPE])

    @extend_schema(
        request=InputSerializer, responses={201: PrivateVersionOutputSerializer, **ERRORS}
    )
    def put(self, request: Request, bot_id: int) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        version = services.bot_set_endpoint(
            user=request_user(request), bot_id=bot_id, endpoint=s.validated_data["endpoint"]
        )
        return Response(versions_out(version, private=True), status=status.HTTP_201_CREATED)


class BotSuspendApi(APIView):
    """Staff: suspend a bot with a reason."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(StrictInputSerializer):
        reason = serializers.CharField(max_length=500)

    @extend_schema(request=InputSerializer, responses={200: BotOutputSerializer, **ERRORS})
    def post(self, request: Request, bot_id: int) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        services.bot_suspend(user=request_user(request), bot_id=bot_id, **s.validated_data)
        return Response(BotOutputSerializer(selectors.bot_get(bot_id=bot_id)).data)


class BotUnsuspendApi(APIView):
    """Reactivate a suspended bot: staff always; the owner when the ladder suspended it (auto)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: BotOutputSerializer, **ERRORS})
    def post(self, request: Request, bot_id: int) -> Response:
        services.bot_unsuspend(user=request_user(request), bot_id=bot_id)
        return Response(BotOutputSerializer(selectors.bot_get(bot_id=bot_id)).data)


class VersionSmokeApi(APIView):
    """A hosted version's smoke match: its status, what happened and the bot's log.

    Owner and staff only; the log is what the bot itself wrote.
    """

    permission_classes = [IsAuthenticated]

    class OutputSerializer(serializers.Serializer):
        number = serializers.IntegerField()
        status = serializers.ChoiceField(choices=BotVersion.Status.choices)
        outcome = serializers.CharField(source="smoke_outcome")
        played_at = serializers.DateTimeField(source="smoke_at", allow_null=True)
        log = serializers.CharField(help_text="the bot's output in its smoke match")

    @extend_schema(responses={200: OutputSerializer, **ERRORS})
    def get(self, request: Request, bot_id: int, number: int) -> Response:
        version = selectors.bot_version_for_owner(
            user=request_user(request), bot_id=bot_id, number=number
        )
        log = log_read(version.smoke_log.name) if version.smoke_log.name else b""
        version.log = log.decode("utf-8", errors="replace")  # type: ignore[attr-defined]
        response = Response(self.OutputSerializer(version).data)
        response["Cache-Control"] = "private, no-store"
        return response
