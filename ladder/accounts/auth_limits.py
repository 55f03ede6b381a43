"""Failed authentication, limited per client address and per account.

Every way in goes through here: API tokens over REST and gRPC, HTTP Basic on
the token endpoint, the session login and the admin login (the last three
through `ladder.accounts.backends.LimitedModelBackend`, which Django's
``authenticate()`` calls). Each failure counts against the client's address
and, when a username was given, against that account; while either is over its
limit (``LADDER_AUTH_FAILURES_PER_ADDRESS``, ``LADDER_AUTH_FAILURES_PER_ACCOUNT``)
further tries are refused *before* any password hash is computed, with the
seconds to wait - so guessing is slow and cannot burn the server's CPU on
PBKDF2 either. Even the right password is refused while limited: that is what
makes guessing useless.

A limited account still works with its API tokens: locking a password out
must not let a stranger stop someone's bots.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings

from ladder.accounts.models import ApiToken
from ladder.accounts.services import token_authenticate
from ladder.common.exceptions import ApplicationError
from ladder.common.ratelimit import FixedWindow, client_address


class TooManyFailures(ApplicationError):
    """Too many failed authentications from this address or for this account (429)."""

    code = "too_many_failures"

    def __init__(self, *, retry_after: int) -> None:
        super().__init__(
            f"too many failed authentications; retry in {retry_after} s",
            extra={"retry_after": retry_after},
        )
        self.retry_after = retry_after


def _windows() -> tuple[FixedWindow | None, FixedWindow | None]:
    """(per address, per account), read from settings at each call (tests override them)."""
    return (
        FixedWindow.from_rate("auth-fail-address", settings.LADDER_AUTH_FAILURES_PER_ADDRESS),
        FixedWindow.from_rate("auth-fail-account", settings.LADDER_AUTH_FAILURES_PER_ACCOUNT),
    )


def _account(username: str) -> str:
    return username.strip().lower()


def request_address(request: Any) -> str:
    """The client address of a Django (or DRF) request, as every limit of the ladder keys it."""
    meta = request.META
    return client_address(meta.get("REMOTE_ADDR", ""), meta.get("HTTP_X_FORWARDED_FOR"))


def retry_after(*, address: str | None, username: str | None = None) -> int:
    """Seconds until this address and account may try again; 0 when they may now.

    For pages that want to say how long to wait (the login form).
    """
    per_address, per_account = _windows()
    if per_address and address and per_address.count(address) >= per_address.limit:
        return per_address.retry_after()
    if per_account and username and per_account.count(_account(username)) >= per_account.limit:
        return per_account.retry_after()
    return 0


def auth_check(*, address: str | None, username: str | None = None) -> None:
    """Raise TooManyFailures when this address or account may not try now (cheap: no hash)."""
    wait = retry_after(address=address, username=username)
    if wait:
        raise TooManyFailures(retry_after=wait)


def auth_attempt(*, address: str | None, username: str | None = None) -> Callable[[], None]:
    """Reserve one try for this address and account, atomically, before the password is
    hashed: a hit of each window first (an atomic increment in the cache), refused with
    TooManyFailures when it passes the limit. Checking the count and counting the failure
    only after the hash let every guess of a burst pass the check (all arrive before the
    first one fails). Returns what to call when the try succeeded (a success is no failure:
    its hits are given back)."""
    hits: list[tuple[FixedWindow, str]] = []
    per_address, per_account = _windows()
    if per_address and address:
        hits.append((per_address, address))
    if per_account and username:
        hits.append((per_account, _account(username)))
    over = None
    for window, key in hits:
        if window.hit(key) > window.limit and over is None:
            over = window
    if over is not None:
        for window, key in hits:
            window.give_back(key)
        raise TooManyFailures(retry_after=over.retry_after())

    def succeeded() -> None:
        for window, key in hits:
            window.give_back(key)

    return succeeded


def auth_failed(*, address: str | None, username: str | None = None) -> None:
    """Count one failed authentication against the address and (if named) the account."""
    per_address, per_account = _windows()
    if per_address and address:
        per_address.hit(address)
    if per_account and username:
        per_account.hit(_account(username))


def token_authenticate_limited(*, secret: str, address: str) -> ApiToken | None:
    """`token_authenticate` behind the failure limit of ``address``; None when invalid.

    Only a wrong token counts. A token costs one digest and one indexed lookup (no
    PBKDF2 to protect), so it is looked up first and a wrong one is counted after,
    atomically: the tries past the limit, even in a burst sent at once, answer
    TooManyFailures, not "unknown". Reserving a try before the lookup (as passwords
    do) counted logins still in progress as failures, so thirty bots behind one
    address reconnecting together after a restart were refused. While the address is
    over its limit, even a valid token is refused (guessing stays useless)."""
    auth_check(address=address)
    token = token_authenticate(secret=secret) if secret else None
    if token is not None:
        return token
    per_address, _ = _windows()
    if per_address and address and per_address.hit(address) > per_address.limit:
        raise TooManyFailures(retry_after=per_address.retry_after())
    return None
