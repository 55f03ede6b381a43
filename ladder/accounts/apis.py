"""REST API of the caller's API tokens: list, create (secret shown once), revoke.

Thin views (HackSoft style) over ``ladder.accounts.services`` and ``.selectors``.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.accounts import selectors, services
from ladder.accounts.requests import request_user
from ladder.accounts.rest_authentication import ApiTokenAuthentication, BasicAuthentication
from ladder.common.pagination import PagePagination
from ladder.common.schema import ERRORS
from ladder.common.serializers import StrictInputSerializer


class TokenOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    prefix = serializers.CharField()
    created_at = serializers.DateTimeField()
    last_used_at = serializers.DateTimeField(allow_null=True)
    revoked_at = serializers.DateTimeField(allow_null=True)


class TokenListApi(APIView):
    """The caller's tokens; create one (its secret is in this response only).

    Also accepts HTTP Basic (username/password) so a first token can be created.
    """

    pagination_class = PagePagination  # the list's page shape, in the schema too

    # Tokens, and HTTP Basic (limited like every password check) so a first token can be made.
    authentication_classes = [ApiTokenAuthentication, BasicAuthentication, SessionAuthentication]
    permission_classes = [IsAuthenticated]

    class InputSerializer(StrictInputSerializer):
        name = serializers.CharField(max_length=64, required=False, default="", allow_blank=True)

    class OutputSerializer(TokenOutputSerializer):
        token = serializers.CharField(help_text="the secret; shown once, store it now")

    @extend_schema(responses={200: TokenOutputSerializer(many=True), 401: ERRORS[401]})
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(
            selectors.token_list(user=request_user(request)), request, view=self
        )
        return paginator.get_paginated_response(TokenOutputSerializer(page, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: OutputSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        created = services.token_create(user=request_user(request), name=s.validated_data["name"])
        return Response(
            {**TokenOutputSerializer(created.token).data, "token": created.secret},
            status=status.HTTP_201_CREATED,
        )


class TokenRevokeApi(APIView):
    """Revoke one of the caller's tokens (effective immediately)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={204: None, **ERRORS})
    def delete(self, request: Request, token_id: int) -> Response:
        services.token_revoke(user=request_user(request), token_id=token_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
