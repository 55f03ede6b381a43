"""The user behind a request, for the interfaces (REST views, admin actions)."""

from __future__ import annotations

from django.http import HttpRequest
from rest_framework.exceptions import NotAuthenticated
from rest_framework.request import Request

from ladder.accounts.models import User


def request_user(request: HttpRequest | Request) -> User:
    """The signed-in user of a request that needs one (a write, a private list).

    Views already require authentication for writes (permission classes); this
    turns the ``User | AnonymousUser`` of the request into the ``User`` the
    services take, and answers 401 if a view ever forgot.
    """
    user = request.user
    if not isinstance(user, User) or not user.is_authenticated:
        raise NotAuthenticated()
    return user
