"""Read-side queries for accounts: a user's API tokens."""

from __future__ import annotations

from django.db.models import QuerySet

from ladder.accounts.models import ApiToken, User


def token_list(*, user: User) -> QuerySet[ApiToken]:
    """The user's tokens (revoked ones too), newest first; secrets are never stored."""
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-id")
