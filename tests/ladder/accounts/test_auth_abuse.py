"""Failed authentication is limited per client address and per account, on every way in:
API tokens and HTTP Basic over REST, and the session login (here: the admin's, which
goes through the same ``authenticate()`` as the login pages). Limited tries are refused
before any password hash; the anonymous throttle believes no client-supplied header."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from rest_framework.test import APIClient

from ladder.accounts import auth_limits
from tests.support.hashers import CountingPBKDF2PasswordHasher as Hasher

pytestmark = pytest.mark.django_db

PASSWORD = "right-horse-battery"


@pytest.fixture
def limits(settings: Any) -> None:
    settings.LADDER_AUTH_FAILURES_PER_ADDRESS = "8/15min"
    settings.LADDER_AUTH_FAILURES_PER_ACCOUNT = "5/15min"
    settings.PASSWORD_HASHERS = ["tests.support.hashers.CountingPBKDF2PasswordHasher"]


def basic(username: str, password: str, address: str = "10.0.0.1") -> APIClient:
    client = APIClient(REMOTE_ADDR=address)
    raw = base64.b64encode(f"{username}:{password}".encode()).decode()
    client.credentials(HTTP_AUTHORIZATION=f"Basic {raw}")
    return client


def test_password_guessing_is_limited_per_account(limits: None, make_user: Any) -> None:
    make_user("alice", password=PASSWORD)
    codes = [
        basic("alice", f"guess-{i}", f"10.0.0.{i}").get("/api/v1/tokens/").status_code
        for i in range(7)
    ]
    # Five wrong passwords (from five addresses), then the account is limited.
    assert codes == [401] * 5 + [429] * 2
    hashed = Hasher.hashed
    r = basic("alice", PASSWORD, "10.9.9.9").get("/api/v1/tokens/")
    assert r.status_code == 429, "the right password must not work while limited"
    assert r.json()["error"] == "throttled" and 0 < int(r["Retry-After"]) <= 900
    assert Hasher.hashed == hashed, "a limited try must cost no password hash"
    # Another account is not affected; nor are the limited account's API tokens.
    make_user("bob", password=PASSWORD)
    assert basic("bob", PASSWORD, "10.9.9.9").get("/api/v1/tokens/").status_code == 200


def test_password_guessing_is_limited_per_address(limits: None, make_user: Any) -> None:
    for name in ("u1", "u2", "u3"):
        make_user(name, password=PASSWORD)
    codes = [
        basic(f"u{1 + i % 3}", f"guess-{i}").get("/api/v1/tokens/").status_code for i in range(10)
    ]
    assert codes == [401] * 8 + [429] * 2  # 8 failures from 10.0.0.1, across accounts
    assert basic("u1", PASSWORD).get("/api/v1/tokens/").status_code == 429
    assert basic("u1", PASSWORD, "10.0.0.2").get("/api/v1/tokens/").status_code == 200


def test_token_guessing_is_limited_per_address(
    limits: None, make_user: Any, token_for: Any
) -> None:
    token = token_for(make_user("carol"))
    guesser = APIClient(REMOTE_ADDR="10.0.0.7")
    codes = []
    for i in range(10):
        guesser.credentials(HTTP_AUTHORIZATION=f"Bearer ddl_guess{i:040d}")
        codes.append(guesser.get("/api/v1/bots/").status_code)
    assert codes == [401] * 8 + [429] * 2
    # Refused before the lookup: even a valid token from this address, until the window ends.
    guesser.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    r = guesser.get("/api/v1/bots/")
    assert r.status_code == 429 and "failed authentications" in r.json()["detail"]
    good = APIClient(REMOTE_ADDR="10.0.0.8")
    good.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert good.get("/api/v1/bots/").status_code == 200
    # Anonymous reads from the limited address are not authentication: they still work.
    assert APIClient(REMOTE_ADDR="10.0.0.7").get("/api/v1/bots/").status_code == 200


def test_forwarded_for_does_not_make_a_new_client(limits: None, make_user: Any) -> None:
    """Without trusted proxies X-Forwarded-For is the client's own claim: ignored."""
    make_user("dave", password=PASSWORD)
    codes = [
        basic(f"nobody{i}", "x", "10.0.0.3")
        .get("/api/v1/tokens/", HTTP_X_FORWARDED_FOR=f"203.0.113.{i}")
        .status_code
        for i in range(10)
    ]
    assert codes == [401] * 8 + [429] * 2


def test_anonymous_throttle_keys_on_the_socket_unless_proxies_are_trusted(
    settings: Any,
) -> None:
    rf = dict(settings.REST_FRAMEWORK)
    rf["DEFAULT_THROTTLE_RATES"] = {"anon": "3/min", "user": "3/min"}
    settings.REST_FRAMEWORK = rf
    client = APIClient(REMOTE_ADDR="10.0.0.4")
    codes = [
        client.get("/api/v1/leaderboard/", HTTP_X_FORWARDED_FOR=f"198.51.100.{i}").status_code
        for i in range(4)
    ]
    assert codes == [200, 200, 200, 429]
    # Behind one trusted proxy, the address it appended is the client.
    settings.REST_FRAMEWORK = {**rf, "NUM_PROXIES": 1}
    proxy = APIClient(REMOTE_ADDR="10.0.0.5")
    codes = [
        proxy.get(
            "/api/v1/leaderboard/", HTTP_X_FORWARDED_FOR=f"6.6.6.6, 198.51.100.{i}"
        ).status_code
        for i in range(4)
    ]
    assert codes == [200] * 4  # four clients behind the proxy
    codes = [
        proxy.get(
            "/api/v1/leaderboard/", HTTP_X_FORWARDED_FOR=f"{i}.1.1.1, 198.51.100.9"
        ).status_code
        for i in range(4)
    ]
    assert codes == [200, 200, 200, 429]  # what the client put before it does not count


def test_session_login_is_limited(limits: None, make_user: Any, client: Any) -> None:
    """Django's login form (the admin's here; the site's pages call the same
    ``authenticate()``) runs through LimitedModelBackend."""
    make_user("erin", staff=True, password=PASSWORD)
    for i in range(5):
        r = client.post(
            "/admin/login/", {"username": "erin", "password": f"guess-{i}"}, REMOTE_ADDR="10.1.1.1"
        )
        assert r.status_code == 200 and not r.wsgi_request.user.is_authenticated
    assert auth_limits.retry_after(address="10.1.1.2", username="ERIN ") > 0
    hashed = Hasher.hashed
    r = client.post(
        "/admin/login/", {"username": "erin", "password": PASSWORD}, REMOTE_ADDR="10.1.1.2"
    )
    assert r.status_code == 200 and not r.wsgi_request.user.is_authenticated
    assert Hasher.hashed == hashed
    assert auth_limits.retry_after(address="10.1.1.3", username="frank") == 0
