"""Read-side queries for accounts."""

from __future__ import annotations

from django.db.models import QuerySet

from ladder.accounts.models import ApiToken, User


def token_list(*, user: User) -> QuerySet[ApiToken]:
    """A user's tokens, newest first (revoked ones too, marked by ``revoked_at``)."""
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-id")
