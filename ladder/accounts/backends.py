"""Django's username/password backend behind the failed-authentication limit.

Installed as the only entry of ``AUTHENTICATION_BACKENDS``, so every
``django.contrib.auth.authenticate()`` call is limited without its caller
doing anything: the session login page, the admin login, and HTTP Basic on the
REST token endpoint. A limited address or account is refused before the
password is hashed (``PermissionDenied`` stops ``authenticate()`` at once);
a page that wants to say how long to wait asks
``ladder.accounts.auth_limits.retry_after``.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from ladder.accounts import auth_limits


class LimitedModelBackend(ModelBackend):
    """ModelBackend that counts failures per client address and per account."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> Any:
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        address = auth_limits.request_address(request) if request is not None else None
        if password is None:
            return super().authenticate(request, username=username, password=password, **kwargs)
        try:
            # The try is counted before the hash (atomically): a burst of guesses that all
            # arrive before the first one fails cannot all pass a check made before it.
            succeeded = auth_limits.auth_attempt(address=address, username=username)
        except auth_limits.TooManyFailures:
            raise PermissionDenied from None
        user = super().authenticate(request, username=username, password=password, **kwargs)
        if user is not None:
            succeeded()
        return user
