"""Failed-authentication limits hold when the guesses arrive at once, not only in turn.

The limit was checked before the password hash and the failure counted after it,
so every guess of a burst that arrived before the first one failed passed the
check: 20 guesses at once for an account limited to 5 failures were all hashed.
Now each try is counted (atomically, in the cache) before its hash and given
back if it succeeds. Threads behind a barrier call ``authenticate()`` as the
login pages and HTTP Basic do; the counting hasher says how many were tried.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.contrib.auth import authenticate
from django.core.cache import cache
from django.db import connection
from django.test import RequestFactory

from ladder.accounts import auth_limits
from ladder.accounts.models import ApiToken
from tests.support.hashers import CountingPBKDF2PasswordHasher as Hasher

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sqlite_too]
N = 20
PASSWORD = "right-horse-battery"


def burst(call: Any) -> list[Any]:
    barrier = threading.Barrier(N)
    out: list[Any] = [None] * N

    def run(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            out[i] = call(i)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return out


def test_a_burst_of_password_guesses_is_limited_per_account(settings: Any, make_user: Any) -> None:
    settings.LADDER_AUTH_FAILURES_PER_ADDRESS = "1000/15min"
    settings.LADDER_AUTH_FAILURES_PER_ACCOUNT = "5/15min"
    settings.PASSWORD_HASHERS = ["tests.support.hashers.CountingPBKDF2PasswordHasher"]
    make_user("alice", password=PASSWORD)
    cache.clear()
    hashed = Hasher.hashed

    def guess(i: int) -> Any:
        request = RequestFactory().post("/accounts/login/", REMOTE_ADDR=f"10.0.1.{i}")
        return authenticate(request, username="alice", password=f"guess-{i}")

    assert burst(guess) == [None] * N
    tried = Hasher.hashed - hashed
    assert tried == 5, f"{tried} guesses were hashed, limit 5"
    assert auth_limits.retry_after(address=None, username="alice") > 0


def test_a_burst_of_wrong_tokens_is_limited_per_address(settings: Any) -> None:
    settings.LADDER_AUTH_FAILURES_PER_ADDRESS = "8/15min"
    cache.clear()
    looked_up = []

    def wrong(i: int) -> str:
        try:
            token = auth_limits.token_authenticate_limited(
                secret=f"ddl_wrong{i:040d}", address="10.0.2.1"
            )
        except auth_limits.TooManyFailures:
            return "limited"
        looked_up.append(i)
        assert token is None
        return "unknown"

    answers = burst(wrong)
    assert answers.count("unknown") == 8, answers
    assert not ApiToken.objects.exists()


def test_a_burst_of_right_tokens_from_one_address_is_never_limited(
    settings: Any, make_user: Any
) -> None:
    """Bots behind one address reconnecting together (after a server restart) all log in:
    a try is counted only once it failed. Before, each token check in progress was
    counted as a failure, so the ninth of twenty valid logins was refused."""
    settings.LADDER_AUTH_FAILURES_PER_ADDRESS = "8/15min"
    cache.clear()
    from ladder.accounts.services import token_create

    secret = token_create(user=make_user("nat")).secret

    def right(_i: int) -> str:
        try:
            token = auth_limits.token_authenticate_limited(secret=secret, address="10.0.3.1")
        except auth_limits.TooManyFailures:
            return "limited"
        return "valid" if token is not None else "unknown"

    assert burst(right) == ["valid"] * N
    assert auth_limits.retry_after(address="10.0.3.1") == 0
