"""Anonymous pages from the shared cache: a recorded match changes them, a signed-in user never
gets one, and every answer says ``Vary: Cookie``.

The cache is this process's (the test client runs the views here); the
generation is bumped by the recording service's on-commit hook, run as it would
be when the transaction commits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from ladder.bots.services import bot_suspend, bot_update
from ladder.common import pagecache
from ladder.matches.creation import match_create
from tests.ladder.conftest import record


@pytest.fixture
def cached(settings: Any) -> None:
    settings.LADDER_PAGE_CACHE_SECONDS = 60


@pytest.fixture
def pair(make_user: Callable[..., Any], make_bot: Callable[..., Any]) -> tuple[Any, Any]:
    owner = make_user("cacher")
    return make_bot(owner, "cache-a"), make_bot(owner, "cache-b")


def test_a_recorded_match_changes_the_cached_pages(
    cached: None, pair: tuple[Any, Any], client: Client, django_capture_on_commit_callbacks: Any
) -> None:
    a, b = pair
    urls = ["/", f"/bots/{a.pk}/"]
    before = {}
    for url in urls:
        first, second = client.get(url), client.get(url)
        assert (first["X-Page-Cache"], second["X-Page-Cache"]) == ("miss", "hit"), url
        assert first.content == second.content and "Cookie" in second["Vary"]
        before[url] = second.content
    gen = pagecache.generation()
    with django_capture_on_commit_callbacks(execute=True):
        record(match_create(bot_ids=[a.pk, b.pk]), [1, 2])
    assert pagecache.generation() == gen + 1
    for url in urls:
        after = client.get(url)
        assert after["X-Page-Cache"] == "miss", url
        assert after.content != before[url], url
    page = client.get(f"/bots/{a.pk}/").content.decode()
    assert "cache-b" in page  # the new match is on it


def test_an_owners_edit_and_a_suspension_change_the_cached_pages(
    cached: None,
    pair: tuple[Any, Any],
    client: Client,
    make_user: Callable[..., Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    a, _ = pair
    url = f"/bots/{a.pk}/"
    client.get(url)
    assert client.get(url)["X-Page-Cache"] == "hit"
    with django_capture_on_commit_callbacks(execute=True):
        bot_update(user=a.owner, bot_id=a.pk, description="now digs for diamonds only")
    page = client.get(url)
    assert page["X-Page-Cache"] == "miss" and "digs for diamonds only" in page.content.decode()
    assert client.get("/")["X-Page-Cache"] == "miss"  # the board too: one generation for all
    staff = make_user("moderator", staff=True)
    with django_capture_on_commit_callbacks(execute=True):
        bot_suspend(user=staff, bot_id=a.pk, reason="probing the sandbox")
    assert client.get(url)["X-Page-Cache"] == "miss"


def test_a_signed_in_user_never_gets_a_cached_page(
    cached: None, pair: tuple[Any, Any], client: Client, make_user: Callable[..., Any]
) -> None:
    a, _ = pair
    anonymous = Client()
    for url in ("/", f"/bots/{a.pk}/"):
        anonymous.get(url)
        assert anonymous.get(url)["X-Page-Cache"] == "hit"
    make_user("sigrid")
    assert client.login(username="sigrid", password="pw-12345678")
    for url in ("/", f"/bots/{a.pk}/"):
        r = client.get(url)
        assert not r.has_header("X-Page-Cache") and "Cookie" in r["Vary"], url
        assert "(sigrid)" in r.content.decode()  # the page is the user's own
        # ...and the anonymous copy never shows the user.
        assert "(sigrid)" not in anonymous.get(url).content.decode()


def test_off_without_a_lifetime(pair: tuple[Any, Any], client: Client, settings: Any) -> None:
    settings.LADDER_PAGE_CACHE_SECONDS = 0
    r = client.get("/")
    assert not r.has_header("X-Page-Cache") and "Cookie" in r["Vary"]
