"""Account services: sign-up; tokens: create (secret shown once), revoke, authenticate."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from ladder.accounts import revocations
from ladder.accounts.models import ApiToken, User
from ladder.common.exceptions import Conflict, NotFound, PermissionDenied
from ladder.quotas.take import quota_lock

TOKEN_PREFIX = "ddl_"
MAX_ACTIVE_TOKENS = 20
LAST_USED_RESOLUTION = timedelta(minutes=1)


def token_digest(secret: str) -> str:
    """SHA-256 hex of a token secret; the only form stored."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CreatedToken:
    """A new token and its secret; the secret is never retrievable again."""

    token: ApiToken
    secret: str


@transaction.atomic
def user_signup(*, username: str, password: str, email: str = "") -> User:
    """A new, ordinary account (never staff). The form has checked the password's rules.

    Usernames are unique ignoring case, so that two accounts can never pass for one.
    """
    if User.objects.filter(username__iexact=username).exists():
        raise Conflict("that username is taken")
    user = User(username=username, email=email)
    user.set_password(password)
    user.full_clean(exclude=["password"])
    user.save()
    return user


@transaction.atomic
def token_create(*, user: User, name: str = "") -> CreatedToken:
    """Create a token for ``user``; return the secret once."""
    quota_lock(user)  # two requests at once must not both count the last free place
    active = ApiToken.objects.filter(user=user, revoked_at__isnull=True).count()
    if active >= MAX_ACTIVE_TOKENS:
        raise PermissionDenied(f"at most {MAX_ACTIVE_TOKENS} active tokens per user; revoke one")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(user=user, name=name[:64], prefix=secret[:12], digest=token_digest(secret))
    token.full_clean()
    token.save()
    return CreatedToken(token=token, secret=secret)


@transaction.atomic
def token_revoke(*, user: User, token_id: int) -> ApiToken:
    """Revoke one of ``user``'s tokens (staff may revoke anyone's). Idempotent."""
    qs = ApiToken.objects.select_for_update()
    if not user.is_staff:
        qs = qs.filter(user=user)
    token = qs.filter(pk=token_id).first()
    if token is None:
        raise NotFound("no such token")
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        # Its connected bots' streams close at once (every grpcserver listens).
        transaction.on_commit(lambda: revocations.publish_revoked(token_id))
    return token


def token_authenticate(*, secret: str) -> ApiToken | None:
    """Return the active token for ``secret`` or None; touches last_used_at sparingly."""
    if not secret.startswith(TOKEN_PREFIX):
        return None
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=token_digest(secret), revoked_at__isnull=True)
        .first()
    )
    if token is None or not token.user.is_active:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        # A plain UPDATE, outside any lock: losing one timestamp is harmless.
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token
