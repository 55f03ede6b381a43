"""The pages in-process: queries per page bounded (no N+1), figures from the selectors, access.

The browser suite (test_browser.py) drives the same pages in Chromium; here the
Django test client counts queries and checks what a browser cannot see.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from ladder.matches.models import Match, Tournament
from ladder.matches.services import match_create
from ladder.ratings import selectors as rating_selectors
from tests.ladder.conftest import record

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _media(settings: Any, tmp_path: Any) -> None:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def grow(make_user: Any, make_bot: Any, *, owners: int, bots_each: int, rounds: int) -> dict:
    """Users, bots and recorded matches (2, 3 and 4 seats), some in a tournament."""
    users = [make_user(f"user{i}-{owners}-{bots_each}") for i in range(owners)]
    bots = [make_bot(u, f"b{i}-{j}-{owners}x{bots_each}") for i, u in enumerate(users)
            for j in range(bots_each)]  # fmt: skip
    cup = Tournament.objects.create(name=f"cup-{owners}-{bots_each}")
    cup.participants.set(bots)
    matches = []
    for r in range(rounds):
        for n in (2, 3, 4):
            seated = [bots[(r + k * 3) % len(bots)] for k in range(n)]
            if len({b.pk for b in seated}) < n:
                continue
            m = match_create(bot_ids=[b.pk for b in seated],
                             tournament=cup if r % 2 else None)  # fmt: skip
            record(m, [((k + r) % n) + 1 for k in range(n)])
            matches.append(m)
    queued = match_create(bot_ids=[bots[0].pk, bots[1].pk])
    return {"users": users, "bots": bots, "matches": matches, "cup": cup, "queued": queued}


def queries(client: Client, url: str, status: int = 200) -> int:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    return len(ctx.captured_queries)


def page_urls(world: dict) -> dict[str, str]:
    bot = world["bots"][0]
    return {
        "leaderboard": "/",
        "search": "/?q=b&sort=-games&kind=hosted&page_size=10&page=1",
        "bot": f"/bots/{bot.pk}/",
        "match": f"/matches/{world['matches'][-1].pk}/",
        "tournaments": "/tournaments/",
        "tournament": f"/tournaments/{world['cup'].pk}/",
        "now": "/now/",
        "dashboard": "/me/",
        "manage": f"/me/bots/{bot.pk}/",
        "tokens": "/me/tokens/",
    }


def test_queries_per_page_do_not_grow_with_the_data(make_user: Any, make_bot: Any) -> None:
    """Each page runs the same (small) number of queries for 4 bots or 40 and 40x the matches."""
    counts = []
    for owners, bots_each, rounds in ((2, 2, 2), (8, 5, 20)):
        world = grow(make_user, make_bot, owners=owners, bots_each=bots_each, rounds=rounds)
        client = Client()
        client.force_login(world["users"][0])
        counts.append({name: queries(client, url) for name, url in page_urls(world).items()})
    small, large = counts
    assert small == large, {k: (small[k], large[k]) for k in small if small[k] != large[k]}
    # Session and user lookups included; a list page is a handful of queries.
    assert max(large.values()) <= 16, large


def test_leaderboard_lines_equal_the_api(make_user: Any, make_bot: Any) -> None:
    world = grow(make_user, make_bot, owners=3, bots_each=3, rounds=6)
    client = Client()
    api = client.get("/api/v1/leaderboard/?page_size=200").json()["results"]
    html = client.get("/?page_size=200").content.decode()
    for entry in api:
        low, high = entry["interval95"] or (None, None)
        marker = f'data-rating="{entry["rating"]}"'
        if low is not None:
            marker += f' data-low="{low}" data-high="{high}"'
        assert marker in html, entry
    ids = [b.pk for b in world["bots"]]
    positions = rating_selectors.leaderboard_positions(bot_ids=ids)
    assert positions == {e["id"]: e["position"] for e in api}
    hosted_api = client.get("/api/v1/leaderboard/?kind=hosted&page_size=200").json()["results"]
    assert rating_selectors.leaderboard_positions(bot_ids=ids, kind="hosted") == {
        e["id"]: e["position"] for e in hosted_api
    }


def test_search_sort_and_bad_parameters(make_user: Any, make_bot: Any) -> None:
    world = grow(make_user, make_bot, owners=2, bots_each=2, rounds=3)
    client = Client()
    owner = world["users"][1].username
    page = client.get("/", {"q": owner}).content.decode()
    mine = [b.name for b in world["bots"] if b.owner_id == world["users"][1].pk]
    assert all(name in page for name in mine)
    assert world["bots"][0].name not in page
    for bad in ("?sort=password", "?page=zzz", "?page_size=7", "?kind=alien", "?page=999"):
        assert client.get("/" + bad).status_code == 200


def test_rating_trend_and_first_places(make_user: Any, make_bot: Any) -> None:
    alice = make_user("alice")
    a, b = make_bot(alice, "alpha"), make_bot(alice, "bravo")
    for r in range(25):
        record(match_create(bot_ids=[a.pk, b.pk], requested_by=alice), [1, 2] if r % 3 else [2, 1])
    unrated = match_create(bot_ids=[a.pk, b.pk], requested_by=alice, rated=False)
    record(unrated, [1, 2])
    trends = rating_selectors.bot_rating_trends(bot_ids=[a.pk, b.pk], points=20)
    history = [s.rating_after for s in rating_selectors.bot_rating_history(bot_id=a.pk)]
    assert trends[a.pk] == history[-20:]  # the unrated match is a point where the rating stayed
    assert len(trends[b.pk]) == 20
    firsts = rating_selectors.bot_first_places(bot_ids=[a.pk, b.pk])
    assert firsts == {a.pk: 16, b.pk: 9}  # the rated wins counter, as the gRPC leaderboard


def test_opponent_records_and_standings(make_user: Any, make_bot: Any) -> None:
    from ladder.matches.selectors import bot_opponent_records, tournament_standings

    alice = make_user("alice")
    a, b, c = (make_bot(alice, n) for n in ("alpha", "bravo", "charlie"))
    cup = Tournament.objects.create(name="cup")
    cup.participants.set([a, b, c])
    record(match_create(bot_ids=[a.pk, b.pk, c.pk], requested_by=alice, tournament=cup), [1, 2, 2])
    record(match_create(bot_ids=[a.pk, b.pk], requested_by=alice, tournament=cup), [2, 1])
    match_create(bot_ids=[a.pk, c.pk], requested_by=alice, tournament=cup)  # queued: not counted
    records = {r.opponent_name: r for r in bot_opponent_records(bot_id=a.pk)}
    assert (records["bravo"].matches, records["bravo"].ahead, records["bravo"].behind) == (2, 1, 1)
    assert (records["charlie"].matches, records["charlie"].ahead) == (1, 1)
    assert bot_opponent_records(bot_id=b.pk)[0].opponent_name == "alpha"
    lines = {line.bot_name: line.standing for line in tournament_standings(tournament=cup)}
    assert (lines["alpha"].points, lines["alpha"].wins, lines["alpha"].played) == (2, 1, 2)
    assert lines["bravo"].points == 1.5 and lines["charlie"].points == 0.5
    assert [line.bot_name for line in tournament_standings(tournament=cup)] == [
        "alpha", "bravo", "charlie"
    ]  # fmt: skip
    assert [line.standing.rank for line in tournament_standings(tournament=cup)] == [1, 2, 3]


def test_owner_pages_need_a_sign_in_and_the_owner(make_user: Any, make_bot: Any) -> None:
    alice, bob = make_user("alice"), make_user("bob")
    bot = make_bot(alice, "alpha")
    anonymous = Client()
    for url in ("/me/", f"/me/bots/{bot.pk}/", "/me/tokens/"):
        response = anonymous.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    client = Client()
    client.force_login(bob)
    forbidden = client.get(f"/me/bots/{bot.pk}/")
    assert forbidden.status_code == 403 and b"Not allowed" in forbidden.content
    assert client.get("/me/bots/999999/").status_code == 404
    assert client.get(f"/me/bots/{bot.pk}/upload/").status_code == 405  # POST only


def test_a_challenge_with_unknown_or_inactive_opponents_is_refused_on_the_form(
    make_user: Any, make_bot: Any
) -> None:
    alice = make_user("alice")
    bot = make_bot(alice, "alpha")
    client = Client()
    client.force_login(alice)
    url = f"/me/bots/{bot.pk}/challenge/"
    unknown = client.post(url, {"opponents": "nobody", "difficulty": "normal"})
    assert unknown.status_code == 400 and b"no bot named" in unknown.content
    too_many = client.post(url, {"opponents": "a,b,c,d", "difficulty": "normal"})
    assert too_many.status_code == 400 and b"name 1 to 3 opponents" in too_many.content
    assert not Match.objects.exists()


def test_oversized_upload_is_refused_before_reading(
    make_user: Any, make_bot: Any, settings: Any
) -> None:
    settings.LADDER_UPLOAD_MAX_BYTES = 1000
    alice = make_user("alice")
    bot = make_bot(alice, "alpha")
    client = Client()
    client.force_login(alice)
    from django.core.files.uploadedfile import SimpleUploadedFile

    big = SimpleUploadedFile("bot.py", b"x = 1\n" * 20000)
    response = client.post(f"/me/bots/{bot.pk}/upload/", {"file": big})
    assert response.status_code == 413 and b"limited to 1000 bytes" in response.content
    assert bot.versions.count() == 1


@pytest.mark.urls("tests.web.broken_urls")
def test_server_error_page_has_no_stack_trace(client: Client, settings: Any) -> None:
    settings.DEBUG = False
    client.raise_request_exception = False
    page = client.get("/boom/")
    assert page.status_code == 500
    body = page.content.decode()
    assert "Something broke on our side" in body and "Traceback" not in body
    assert "secret detail" not in body
    assert page["X-Request-ID"] in body  # the reference that finds the traceback in the log
    api = client.get("/api/boom/")
    assert api.status_code == 500
    assert (api.json()["error"], api.json()["detail"]) == ("server_error", "internal error")


def test_sign_in_says_how_long_to_wait_once_limited(make_user: Any, settings: Any) -> None:
    settings.LADDER_AUTH_FAILURES_PER_ACCOUNT = "3/15min"
    from django.core.cache import cache

    cache.clear()
    make_user("alice", password="right-password-1")
    client = Client()
    for _ in range(2):
        wrong = client.post("/accounts/login/", {"username": "alice", "password": "nope"})
        assert wrong.status_code == 200 and b"correct username and password" in wrong.content
    third = client.post("/accounts/login/", {"username": "alice", "password": "nope"})
    assert third.status_code == 429  # that failure reached the limit
    limited = client.post("/accounts/login/", {"username": "alice", "password": "right-password-1"})
    assert limited.status_code == 429 and b"Too many failed sign-ins" in limited.content
    assert "_auth_user_id" not in client.session  # even the right password waits
    cache.clear()
    ok = client.post("/accounts/login/", {"username": "alice", "password": "right-password-1"})
    assert ok.status_code == 302 and ok["Location"] == "/me/"
