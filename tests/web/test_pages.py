"""The pages in-process: queries per page bounded (no N+1), figures from the selectors, access.

The browser suite (test_browser.py) drives the same pages in Chromium; here the
Django test client counts queries and checks what a browser cannot see.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.matches.recording import match_seat_logs_store
from ladder.ratings import selectors as rating_selectors
from ladder.tournaments.models import Tournament
from tests.ladder.conftest import record, standing

pytestmark = pytest.mark.django_db


DD1 = {"ruleset": "dd-1", "difficulty": "normal", "seats": (2, 4)}
DD2 = {"ruleset": "dd-2", "difficulty": "normal", "seats": (2, 4)}


@pytest.fixture(autouse=True)
def two_ladders(settings: Any, tmp_path: Any) -> None:
    """Media in the test's own folder and a second ladder on every page (autouse here and
    in the modules that import it)."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.LADDER_LADDERS = {"dd-1": DD1, "dd-2": DD2}  # a second ladder on every page
    settings.LADDER_DEFAULT_LADDER = "dd-1"


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
                             tournament=cup if r % 2 else None,
                             ladder="dd-2" if n == 3 else None)  # fmt: skip
            record(m, [((k + r) % n) + 1 for k in range(n)])
            matches.append(m)
    # The hosted seats' logs of the latest match of the first bot (each owner sees their own).
    logged = next(m for m in reversed(matches) if m.seats.filter(bot=bots[0]).exists())
    match_seat_logs_store(
        match_id=logged.pk,
        logs={s.seat: f"seat {s.seat} says hello\n".encode() for s in logged.seats.all()},
    )
    queued = match_create(bot_ids=[bots[0].pk, bots[1].pk])
    return {
        "users": users,
        "bots": bots,
        "matches": matches,
        "logged": logged,
        "cup": cup,
        "queued": queued,
    }


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
        "match (with the user's seat log)": f"/matches/{world['logged'].pk}/",
        "match (ladder dd-2)": f"/matches/{world['matches'][-2].pk}/",
        "replay page": f"/replays/matches/{world['matches'][-1].pk}/",
        "leaderboard dd-2": "/?ladder=dd-2&kind=hosted&sort=-games",
        "bot on dd-2": f"/bots/{bot.pk}/?ladder=dd-2",
        "now on dd-2": "/now/?ladder=dd-2",
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
        logged = client.get(f"/matches/{world['logged'].pk}/").content.decode()
        assert "says hello" in logged  # the page measured shows the owner's seat log
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
    page = page[: page.index('id="recent-matches"')]  # the board, not the recent matches
    mine = [b.name for b in world["bots"] if b.owner_id == world["users"][1].pk]
    assert all(name in page for name in mine)
    assert world["bots"][0].name not in page
    for bad in ("?sort=password", "?page=zzz", "?page_size=7", "?kind=alien", "?page=999"):
        assert client.get("/" + bad).status_code == 200


@pytest.mark.sqlite_too  # bot_rating_trends has a LATERAL join for PostgreSQL, a window elsewhere
def test_rating_trend_and_first_places(make_user: Any, make_bot: Any) -> None:
    alice = make_user("alice")
    a, b = make_bot(alice, "alpha"), make_bot(alice, "bravo")
    for r in range(25):
        record(match_create(bot_ids=[a.pk, b.pk], requested_by=alice), [1, 2] if r % 3 else [2, 1])
    unrated = match_create(bot_ids=[a.pk, b.pk], requested_by=alice, rated=False)
    record(unrated, [1, 2])
    trends = rating_selectors.bot_rating_trends(bot_ids=[a.pk, b.pk], points=20)
    history = [s.rating_after for s in rating_selectors.bot_rating_history(bot_id=a.pk)]
    assert trends[a.pk] == history[-20:]  # both count rated matches only
    assert unrated.pk not in {
        s.match_id for s in rating_selectors.bot_rating_history(bot_id=a.pk)
    }  # the chart counts only rated matches
    assert len(trends[b.pk]) == 20
    # First places: the rated wins counter of the rating entry, as the gRPC leaderboard.
    assert (standing(a)[2], standing(b)[2]) == (16, 9)


def test_opponent_records_and_standings(make_user: Any, make_bot: Any) -> None:
    from ladder.matches.selectors import bot_opponent_records
    from ladder.tournaments.selectors import tournament_standings

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


def _rows(html: str, attribute: str) -> dict[str, str]:
    """Table rows of a page by the value of their ``data-<attribute>``."""
    pattern = rf'<tr data-{attribute}="([^"]+)"[^>]*>(.*?)</tr>'
    return dict(re.findall(pattern, html, flags=re.S))


def _cell(row: str, css: str) -> str:
    found = re.search(rf'<td class="[^"]*\b{css}\b[^"]*">(.*?)</td>', row, flags=re.S)
    assert found, (css, row)
    return re.sub(r"<[^>]+>", "", found.group(1)).strip()


def test_ladders_on_the_pages_equal_the_api(make_user: Any, make_bot: Any) -> None:
    """The leaderboard, bot, match and now pages per ladder show the REST API's figures."""
    alice = make_user("alice")
    bots = [make_bot(alice, name) for name in ("alpha", "bravo", "charlie", "delta")]
    ids = [b.pk for b in bots]
    for r in range(6):
        on_dd2 = match_create(bot_ids=ids[: 2 + r % 3], ladder="dd-2", requested_by=alice)
        record(on_dd2, [((k + r) % (2 + r % 3)) + 1 for k in range(2 + r % 3)])
    record(match_create(bot_ids=ids[2:], requested_by=alice), [1, 2])
    client = Client()

    board = client.get("/api/v1/leaderboard/?ladder=dd-2").json()["results"]
    html = client.get("/?ladder=dd-2").content.decode()
    assert 'id="board-ladder">dd-2<' in html and '<option value="dd-2" selected>' in html
    lines = _rows(html, "bot")
    assert list(lines) == [e["name"] for e in board]
    for entry in board:
        line = lines[entry["name"]]
        assert int(_cell(line, "rank")) == entry["position"]
        assert f'data-rating="{entry["rating"]}"' in line
        assert int(_cell(line, "games")) == entry["games"]
    default = client.get("/").content.decode()
    assert list(_rows(default, "bot")) == [
        e["name"] for e in client.get("/api/v1/leaderboard/").json()["results"]
    ]

    alpha = bots[0].pk
    detail = client.get(f"/api/v1/bots/{alpha}/").json()
    page = client.get(f"/bots/{alpha}/?ladder=dd-2").content.decode()
    shown = _rows(page, "ladder")
    assert list(shown) == [r["ladder"] for r in detail["ratings"]] == ["dd-1", "dd-2"]
    for entry in detail["ratings"]:
        row = shown[entry["ladder"]]
        assert f'data-rating="{entry["rating"]}"' in row
        assert (int(_cell(row, "games")), int(_cell(row, "wins"))) == (
            entry["games"],
            entry["wins"],
        )
        api_board = client.get(f"/api/v1/leaderboard/?ladder={entry['ladder']}").json()
        position = next(e["position"] for e in api_board["results"] if e["id"] == alpha)
        assert int(_cell(row, "rank")) == position
    history = client.get(f"/api/v1/bots/{alpha}/rating-history/?ladder=dd-2").json()
    table = re.search(r'<table data-sortable id="history">(.*?)</table>', page, re.S)
    assert table and table.group(1).count("<tr>") == len(history) + 1  # and the header
    assert f"from {history[0]['rating_after']:.2f} to {history[-1]['rating_after']:.2f}" in page

    on_dd2 = Match.objects.filter(ladder="dd-2").order_by("-id").first()
    assert on_dd2 is not None
    match_page = client.get(f"/matches/{on_dd2.pk}/").content.decode()
    assert re.search(r'id="match-ladder">ladder <a href="/\?ladder=dd-2">dd-2</a>', match_page)
    now = client.get("/now/?ladder=dd-2").content.decode()
    listed = {int(n) for n in re.findall(r'href="/matches/(\d+)/"', now)}
    assert listed == set(Match.objects.filter(ladder="dd-2").values_list("pk", flat=True))

    for url in ("/?ladder=nope", f"/bots/{alpha}/?ladder=nope", "/now/?ladder=nope"):
        missing = client.get(url)
        assert missing.status_code == 404 and b"No ladder &#x27;nope&#x27;" in missing.content, url
    assert client.get("/api/v1/leaderboard/?ladder=nope").status_code == 404


def test_seat_logs_are_shown_to_their_owner_and_staff_only(make_user: Any, make_bot: Any) -> None:
    from ladder.web.pages import LOG_SHOWN_BYTES

    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    root = make_user("root", staff=True)
    alpha, bravo = make_bot(alice, "alpha"), make_bot(bob, "bravo")
    match = match_create(bot_ids=[alpha.pk, bravo.pk], requested_by=alice)
    record(match, [1, 2])
    alphas = (
        b"FIRST LINE\n" + b"." * LOG_SHOWN_BYTES
        + b"\x1b[31mred\x1b[0m\r\n<script>alert(1)</script>\nTHE END\n"
    )  # fmt: skip
    match_seat_logs_store(match_id=match.pk, logs={0: alphas, 1: b"bravo's secret\n"})
    url = f"/matches/{match.pk}/"

    def page(user: Any) -> str:
        client = Client()
        if user is not None:
            client.force_login(user)
        return client.get(url).content.decode()

    mine = page(alice)
    assert 'id="seat-logs"' in mine and "THE END" in mine
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in mine and "<script>alert(1)" not in mine
    assert "\x1b" not in mine and "[31mred[0m" in mine  # control characters are not passed on
    assert "FIRST LINE" not in mine and "left out" in mine  # the end of a long log
    assert f'href="/api/v1/matches/{match.pk}/seats/0/log/"' in mine
    assert "bravo&#x27;s secret" not in mine and "/seats/1/log/" not in mine
    bobs = page(bob)
    assert "bravo&#x27;s secret" in bobs and "THE END" not in bobs
    staff = page(root)
    assert "bravo&#x27;s secret" in staff and "THE END" in staff
    for outsider in (carol, None):
        seen = page(outsider)
        assert 'id="seat-logs"' not in seen and "/log/" not in seen
        assert "THE END" not in seen and "secret" not in seen


def test_versions_show_their_status_smoke_outcome_and_log(make_user: Any, make_bot: Any) -> None:
    from ladder.bots.services import bot_version_smoke_record, bot_version_upload

    alice, bob = make_user("alice"), make_user("bob")
    bot = make_bot(alice, "alpha")  # v1: valid (its smoke match passed)
    source = b"def act(obs, legal):\n    return 0\n"
    v2 = bot_version_upload(user=alice, bot_id=bot.pk, filename="bot.py", data=source)
    bot_version_smoke_record(
        version_id=v2.pk, passed=False, outcome="failed: faulted 3 times", log=b"Traceback <x>\n"
    )
    bot_version_upload(user=alice, bot_id=bot.pk, filename="bot.py", data=source)  # v3: pending
    owner = Client()
    owner.force_login(alice)
    manage = owner.get(f"/me/bots/{bot.pk}/").content.decode()
    rows = _rows(manage, "version")
    statuses = dict(re.findall(r'<tr data-version="(\d+)" data-status="(\w+)"', manage))
    assert statuses == {"3": "pending", "2": "invalid", "1": "valid"}
    assert "waiting for its smoke match" in rows["3"]
    assert "failed: faulted 3 times" in rows["2"] and "Traceback &lt;x&gt;" in rows["2"]
    assert "plays" in rows["1"]  # the newest valid version is the one that plays
    assert 'id="upload-explained"' in manage and "smoke match" in manage
    dashboard = owner.get("/me/").content.decode()
    assert "v1 plays; v3" in re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", dashboard))

    other = Client()
    other.force_login(bob)
    public = other.get(f"/bots/{bot.pk}/").content.decode()
    assert "failed: faulted 3 times" in public  # the outcome is public, as in the API
    assert "Traceback" not in public  # the smoke log is the owner's


def test_a_suspended_bot_page_says_why_and_its_owner_how_to_lift_it(
    make_user: Any, make_bot: Any
) -> None:
    from ladder.bots.services import bot_auto_suspend, bot_suspend

    alice, bob = make_user("alice"), make_user("bob")
    staff = make_user("staff", staff=True)
    bot = make_bot(alice, "alpha")
    bot_auto_suspend(bot_id=bot.pk, reason="forfeited its last 3 matches (last: dead)")
    owner, other = Client(), Client()
    owner.force_login(alice)
    other.force_login(bob)
    mine = owner.get(f"/bots/{bot.pk}/").content.decode()
    assert '<p class="big" id="bot-status">suspended</p>' in mine
    assert "automatically suspended: forfeited its last 3 matches (last: dead)" in mine
    assert f"POST /api/v1/bots/{bot.pk}/unsuspend/" in mine and "new valid version" in mine
    public = other.get(f"/bots/{bot.pk}/").content.decode()
    assert "automatically suspended: forfeited" in public and "unsuspend" not in public
    bot_suspend(user=staff, bot_id=bot.pk, reason="collusion")
    mine = owner.get(f"/bots/{bot.pk}/").content.decode()
    assert "Why: collusion" in mine and "only staff can lift it" in mine


def test_suspended_bots_stay_on_the_leaderboard_marked_without_a_position(
    make_user: Any, make_bot: Any
) -> None:
    from ladder.bots.services import bot_auto_suspend

    alice, bob = make_user("alice"), make_user("bob")
    alpha, beta = make_bot(alice, "alpha"), make_bot(bob, "beta")
    bot_auto_suspend(bot_id=alpha.pk, reason="forfeited its last 3 matches (last: dead)")
    board = Client().get("/").content.decode()
    row = board[board.index('data-bot="alpha"') :].split("</tr>")[0]
    assert "suspended: automatically suspended: forfeited its last 3 matches" in row
    assert '<td class="num rank">\u2013</td>' in row  # an en dash: no position
    other = board[board.index('data-bot="beta"') :].split("</tr>")[0]
    assert '<td class="num rank">1</td>' in other and "suspended" not in other
    assert beta.is_active


def test_the_owner_reactivates_an_auto_suspended_bot_from_its_manage_page(
    make_user: Any, make_bot: Any
) -> None:
    from ladder.bots.models import Bot
    from ladder.bots.services import bot_auto_suspend, bot_suspend

    alice, bob = make_user("alice"), make_user("bob")
    staff = make_user("staff", staff=True)
    bot = make_bot(alice, "alpha")
    bot_auto_suspend(bot_id=bot.pk, reason="forfeited its last 3 matches")
    owner, other = Client(), Client()
    owner.force_login(alice)
    other.force_login(bob)
    page = owner.get(f"/me/bots/{bot.pk}/").content.decode()
    assert 'id="reactivate"' in page and "forfeited its last 3 matches" in page
    assert other.post(f"/me/bots/{bot.pk}/reactivate/").status_code == 403
    assert not Bot.objects.get(pk=bot.pk).is_active
    done = owner.post(f"/me/bots/{bot.pk}/reactivate/", follow=True).content.decode()
    assert "is active again" in done and 'id="reactivate"' not in done
    assert Bot.objects.get(pk=bot.pk).is_active
    bot_suspend(user=staff, bot_id=bot.pk, reason="collusion")
    page = owner.get(f"/me/bots/{bot.pk}/").content.decode()
    assert 'id="staff-suspension"' in page and 'id="reactivate"' not in page
    refused = owner.post(f"/me/bots/{bot.pk}/reactivate/", follow=True).content.decode()
    assert "only staff can lift it" in refused
    assert not Bot.objects.get(pk=bot.pk).is_active
