"""REST API of the caller's notifications: what they are told and where, the webhook's
secret, and the deliveries owed to them (to see why a webhook did not get one).

Thin views (HackSoft style) over ``ladder.notifications.services`` and ``.selectors``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.accounts.models import User
from ladder.accounts.requests import request_user
from ladder.common.pagination import NewestFirstPagination
from ladder.common.rest_parsers import BoundedJSONParser
from ladder.common.schema import ERRORS
from ladder.common.serializers import StrictInputSerializer
from ladder.notifications import selectors, services
from ladder.notifications.kinds import Kind
from ladder.notifications.models import WEBHOOK_URL_MAX, Delivery


class ChoiceSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=Kind.choices)
    description = serializers.CharField(read_only=True, source="label", help_text="in words")
    email = serializers.BooleanField()
    webhook = serializers.BooleanField()


class ChoiceInputSerializer(StrictInputSerializer):
    kind = serializers.ChoiceField(choices=Kind.choices)
    email = serializers.BooleanField(required=False)
    webhook = serializers.BooleanField(required=False)


def _settings_data(user: User, *, secret: str | None = None) -> dict[str, Any]:
    webhook = selectors.webhook_of(user_id=user.pk)
    data: dict[str, Any] = {
        "email": user.email,
        "webhook_url": webhook.url if webhook else None,
        "choices": ChoiceSerializer(selectors.choices_of(user=user), many=True).data,
    }
    if secret is not None:
        data["webhook_secret"] = secret
    return data


class NotificationSettingsApi(APIView):
    """What the caller is told and where: e-mail (to their account's address) and a webhook.

    A change names only what it changes. A first webhook URL gets a signing secret,
    in that response only (``webhook_secret``); the URL must reach a public address
    over https (the ladder's SSRF rules). An empty ``webhook_url`` removes the webhook.
    """

    permission_classes = [IsAuthenticated]
    # JSON only: a form's strings ("0", "off") would pass for the booleans the schema promises.
    parser_classes = [BoundedJSONParser]

    class OutputSerializer(serializers.Serializer):
        email = serializers.CharField(help_text="where e-mails go: the account's address")
        webhook_url = serializers.CharField(allow_null=True)
        choices = ChoiceSerializer(many=True)
        webhook_secret = serializers.CharField(
            required=False, help_text="only in the answer that made it; store it now"
        )

    class InputSerializer(StrictInputSerializer):
        webhook_url = serializers.CharField(
            required=False, allow_blank=True, max_length=WEBHOOK_URL_MAX, trim_whitespace=True
        )
        choices = ChoiceInputSerializer(many=True, required=False)

    @extend_schema(responses={200: OutputSerializer, 401: ERRORS[401]})
    def get(self, request: Request) -> Response:
        return Response(_settings_data(request_user(request)))

    @extend_schema(request=InputSerializer, responses={200: OutputSerializer, **ERRORS})
    def patch(self, request: Request) -> Response:
        user = request_user(request)
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        if not {"webhook_url", "choices"} & set(d):
            raise ValidationError({"detail": ["name webhook_url or choices to change"]})
        secret = None
        if "webhook_url" in d:
            secret = services.webhook_set(user=user, url=d["webhook_url"]).secret
        if "choices" in d:
            services.choices_set(
                user=user,
                choices={
                    c["kind"]: {k: c[k] for k in ("email", "webhook") if k in c}
                    for c in d["choices"]
                },
            )
        return Response(_settings_data(user, secret=secret))


class WebhookSecretApi(APIView):
    """Make a new signing secret for the caller's webhook (the old one stops at once)."""

    permission_classes = [IsAuthenticated]

    class OutputSerializer(serializers.Serializer):
        webhook_secret = serializers.CharField(help_text="shown once; store it now")

    @extend_schema(request=None, responses={200: OutputSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        secret = services.webhook_secret_rotate(user=request_user(request))
        return Response({"webhook_secret": secret})


class DeliveryListApi(APIView):
    """The messages owed to the caller, newest first, with where each went and why one
    did not (a webhook's answer, an SMTP refusal)."""

    permission_classes = [IsAuthenticated]
    pagination_class = NewestFirstPagination  # grows with every event: keyset pages

    class OutputSerializer(serializers.Serializer):
        id = serializers.IntegerField()
        kind = serializers.ChoiceField(choices=Kind.choices)
        key = serializers.CharField()
        channel = serializers.CharField()
        subject = serializers.CharField()
        link = serializers.CharField()
        status = serializers.ChoiceField(choices=Delivery.Status.choices)
        attempts = serializers.IntegerField()
        target = serializers.CharField()
        last_error = serializers.CharField()
        created_at = serializers.DateTimeField()
        sent_at = serializers.DateTimeField(allow_null=True)

    @extend_schema(responses={200: OutputSerializer(many=True), 401: ERRORS[401], 404: ERRORS[404]})
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            selectors.deliveries_of(user=request_user(request)), request, view=self
        )
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)
