"""Self sign-up: Django's forms and password rules, limited per address, switchable off."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client, override_settings

from ladder.accounts.models import ApiToken, User

pytestmark = pytest.mark.django_db
GOOD = "deep-cave-torch-42"


@pytest.fixture(autouse=True)
def _fresh_limits() -> None:
    cache.clear()


def sign_up(client: Client, username: str, password: str = GOOD, **extra: Any) -> Any:
    data = {"username": username, "password1": password, "password2": password, **extra}
    return client.post("/accounts/signup/", data)


def test_sign_up_signs_in_and_the_dashboard_offers_a_first_token() -> None:
    client = Client()
    page = client.get("/accounts/signup/")
    assert page.status_code == 200 and b'id="signup-form"' in page.content
    response = sign_up(client, "newdigger", email="nd@example.org")
    assert response.status_code == 302 and response["Location"] == "/me/"
    user = User.objects.get(username="newdigger")
    assert user.email == "nd@example.org" and not user.is_staff and user.check_password(GOOD)
    dashboard = client.get("/me/")
    assert b'id="first-token"' in dashboard.content
    created = client.post("/me/tokens/", {"name": "first token"})
    assert created.status_code == 200 and b'id="new-token"' in created.content
    assert ApiToken.objects.filter(user=user).count() == 1
    assert b'id="first-token"' not in client.get("/me/").content


@pytest.mark.parametrize(
    ("username", "password", "says"),
    [
        ("weakling", "password", b"too common"),
        ("shorty", "a1b2", b"too short"),
        ("numbers", "8675309112233", b"entirely numeric"),
        ("bad name!", GOOD, b"Enter a valid username"),
    ],
)
def test_django_password_and_username_rules(username: str, password: str, says: bytes) -> None:
    response = sign_up(Client(), username, password)
    assert response.status_code == 400 and says in response.content
    assert not User.objects.filter(username=username).exists()


def test_usernames_are_unique_ignoring_case() -> None:
    assert sign_up(Client(), "Caver").status_code == 302
    again = sign_up(Client(), "caver")
    assert again.status_code == 400 and b"already exists" in again.content


@override_settings(LADDER_SIGNUPS_PER_ADDRESS="2/hour")
def test_new_accounts_are_limited_per_address() -> None:
    assert sign_up(Client(), "first1").status_code == 302
    assert sign_up(Client(), "second2").status_code == 302
    refused = sign_up(Client(), "third3")
    assert refused.status_code == 429 and b"Too many new accounts" in refused.content
    assert not User.objects.filter(username="third3").exists()


@override_settings(LADDER_SIGNUP=False)
def test_a_private_ladder_turns_sign_up_off() -> None:
    client = Client()
    assert client.get("/accounts/signup/").status_code == 404
    assert sign_up(client, "intruder").status_code == 404
    assert b"Sign up" not in client.get("/accounts/login/").content
    assert not User.objects.filter(username="intruder").exists()
