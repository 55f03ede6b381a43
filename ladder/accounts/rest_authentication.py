"""DRF authentication: API tokens (``Authorization: Bearer <token>`` or ``Token <token>``)
and HTTP Basic, both behind the failed-authentication limit (`ladder.accounts.auth_limits`).

DRF authenticates before it throttles, so a throttle class never sees a wrong
token or password: the limit is applied here, in the authenticators. A client
address (or, for Basic, an account) over its limit gets 429 with Retry-After
before the token is looked up or the password hashed.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from ladder.accounts import auth_limits
from ladder.accounts.models import ApiToken, User


def _throttled(exc: auth_limits.TooManyFailures) -> exceptions.Throttled:
    return exceptions.Throttled(wait=exc.retry_after, detail=exc.message)


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """Looks the token up by its SHA-256; revoked or unknown tokens fail with 401."""

    keywords = (b"bearer", b"token")

    def authenticate(self, request: Request) -> tuple[User, ApiToken] | None:
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() not in self.keywords:
            return None
        address = auth_limits.request_address(request)
        try:
            secret = parts[1].decode("ascii") if len(parts) == 2 else ""
        except UnicodeDecodeError:
            secret = ""
        try:
            token = auth_limits.token_authenticate_limited(secret=secret, address=address)
        except auth_limits.TooManyFailures as exc:
            raise _throttled(exc) from None
        if token is None:
            why = "invalid or revoked token" if secret else "malformed Authorization header"
            raise exceptions.AuthenticationFailed(why)
        return token.user, token

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="api"'


class BasicAuthentication(authentication.BasicAuthentication):
    """HTTP Basic (username and password), limited per address and account.

    The count itself happens in `LimitedModelBackend` (every ``authenticate()``
    call goes through it); this class only answers 429 instead of 401 when limited.
    """

    def authenticate_credentials(
        self, userid: str, password: str, request: Any = None
    ) -> tuple[User, None]:
        address = auth_limits.request_address(request) if request is not None else None
        try:
            auth_limits.auth_check(address=address, username=userid)
        except auth_limits.TooManyFailures as exc:
            raise _throttled(exc) from None
        return super().authenticate_credentials(userid, password, request)


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "ladder.accounts.rest_authentication.ApiTokenAuthentication"
    name = "ApiToken"

    def get_security_definition(self, auto_schema):  # type: ignore[no-untyped-def]
        return {"type": "http", "scheme": "bearer", "description": "A token from /api/v1/tokens/"}


class BasicScheme(OpenApiAuthenticationExtension):
    target_class = "ladder.accounts.rest_authentication.BasicAuthentication"
    name = "basicAuth"

    def get_security_definition(self, auto_schema):  # type: ignore[no-untyped-def]
        return {"type": "http", "scheme": "basic", "description": "To create a first token"}
