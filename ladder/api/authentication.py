"""DRF authentication by API token: ``Authorization: Bearer <token>`` (or ``Token <token>``)."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.request import Request

from ladder.accounts.models import ApiToken, User
from ladder.accounts.services import token_authenticate


class ApiTokenAuthentication(BaseAuthentication):
    """Looks the token up by its SHA-256; revoked or unknown tokens fail with 401."""

    keywords = (b"bearer", b"token")

    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() not in self.keywords:
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("malformed Authorization header")
        try:
            secret = parts[1].decode("ascii")
        except UnicodeDecodeError as exc:
            raise exceptions.AuthenticationFailed("malformed token") from exc
        token = token_authenticate(secret=secret)
        if token is None:
            raise exceptions.AuthenticationFailed("invalid or revoked token")
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "ladder.api.authentication.ApiTokenAuthentication"
    name = "ApiToken"

    def get_security_definition(self, auto_schema):  # type: ignore[no-untyped-def]
        return {"type": "http", "scheme": "bearer", "description": "A token from /api/v1/tokens/"}
