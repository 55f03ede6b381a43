"""The site in a real browser (Debian's Chromium via Playwright) on a ladder of played matches.

Figures on the pages are checked against the REST API of the same live server;
every test fails on a console error; a screenshot of each page goes to
``var/screenshots/`` (or ``LADDER_SCREENSHOTS_DIR``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import wait_for_js
from tests.support.sandbox import require_sandbox
from tests.web.conftest import PASSWORD, SCREENSHOTS, Page, PlayedLadder

pytestmark = pytest.mark.timeout(240)

MINUS = "\u2212"


def api(site: str, path: str, token: str | None = None) -> Any:
    request = urllib.request.Request(site + path)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.load(reply)


def api_status(site: str, path: str, token: str) -> int:
    request = urllib.request.Request(site + path, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code


def number(text: str) -> float:
    """A figure as the page prints it (real minus sign, ± for zero)."""
    return float(text.strip().replace(MINUS, "-").replace("±", "").replace("+", ""))


def board_rows(tab: Page) -> list[dict[str, Any]]:
    return tab.page.eval_on_selector_all(
        "#leaderboard tbody tr[data-bot]:not([data-suspended])",
        """rows => rows.map(r => ({
            name: r.dataset.bot,
            kind: r.dataset.kind,
            rank: r.querySelector('td.rank').textContent.trim(),
            owner: r.querySelector('td.owner').textContent.trim(),
            rating: parseFloat(r.querySelector('.rating').dataset.rating),
            low: r.querySelector('.rating').dataset.low,
            high: r.querySelector('.rating').dataset.high,
            games: parseInt(r.querySelector('td.games').textContent, 10),
            provisional: !!r.querySelector('.provisional'),
        }))""",
    )


def sign_in(tab: Page, username: str) -> None:
    tab.goto("/accounts/login/")
    tab.page.get_by_label("Username").fill(username)
    tab.page.get_by_label("Password").fill(PASSWORD)
    tab.page.get_by_role("button", name="Sign in").click()
    tab.page.wait_for_url("**/me/")


def assert_labelled(tab: Page) -> None:
    """Every visible form control has a label (or an aria-label)."""
    unlabelled = tab.page.eval_on_selector_all(
        "input:not([type=hidden]), select, textarea",
        "els => els.filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label'))"
        ".map(e => e.name || e.id)",
    )
    assert not unlabelled, unlabelled


def test_leaderboard_loads_sorts_filters_and_pages(
    tab: Page, site: str, played_ladder: PlayedLadder
) -> None:
    board = api(site, "/api/v1/leaderboard/?page_size=200")["results"]
    tab.goto("/")
    assert_labelled(tab)
    tab.shot("leaderboard")
    rows = board_rows(tab)
    assert len(rows) == len(board) == 14  # ghost is suspended: off the board...
    ghost = tab.page.locator("#leaderboard tr[data-bot=ghost][data-suspended]")
    assert "suspended: endpoint unreachable in matches" in ghost.inner_text()  # ...but shown
    for row, entry in zip(rows, board, strict=True):
        assert row["name"] == entry["name"] and int(row["rank"]) == entry["position"]
        assert row["rating"] == entry["rating"] and row["games"] == entry["games"]
        assert row["provisional"] == entry["provisional"]
        if entry["interval95"]:
            assert [float(row["low"]), float(row["high"])] == entry["interval95"]
        else:
            assert row["low"] is None
    position = {e["name"]: e["position"] for e in board}

    # Sort by games (most first), then the other way; the header says which.
    tab.page.get_by_role("link", name="Games").click()
    tab.page.wait_for_url(re.compile(r"sort=-games"))
    games = [r["games"] for r in board_rows(tab)]
    assert games == sorted(games, reverse=True) and games[0] > 0
    assert tab.page.get_attribute("th:has(a[data-sort-key=games])", "aria-sort") == "descending"
    tab.page.get_by_role("link", name="Games").click()
    tab.page.wait_for_url(re.compile(r"sort=games"))
    assert [r["games"] for r in board_rows(tab)] == sorted(games)
    tab.page.get_by_role("link", name="Bot").click()
    tab.page.wait_for_url(re.compile(r"sort=name"))
    names = [r["name"] for r in board_rows(tab)]
    assert names == sorted(names, key=str.lower)
    # Whatever the order, each bot keeps its place on the board.
    assert all(int(r["rank"]) == position[r["name"]] for r in board_rows(tab))
    tab.shot("leaderboard-sorted-by-name")

    # Hosted only: the select applies itself (script); ranks are on the hosted board.
    tab.goto("/")
    tab.page.get_by_label("Bots").select_option("hosted")
    tab.page.wait_for_url(re.compile(r"kind=hosted"))
    hosted = board_rows(tab)
    api_hosted = api(site, "/api/v1/leaderboard/?kind=hosted")["results"]
    assert [(r["name"], int(r["rank"])) for r in hosted] == [
        (e["name"], e["position"]) for e in api_hosted
    ]
    assert {r["kind"] for r in hosted} == {"hosted"}
    tab.shot("leaderboard-hosted")

    # Search by owner (or bot name): bob's bots, still with their board ranks.
    tab.goto("/")
    tab.page.get_by_label("Bot or owner").fill("bob")
    tab.page.get_by_label("Bot or owner").press("Enter")
    tab.page.wait_for_url(re.compile(r"q=bob"))
    found = board_rows(tab)
    assert {r["name"] for r in found} == {"mole", "pebble", "lurker"}
    assert all(r["owner"] == "bob" and int(r["rank"]) == position[r["name"]] for r in found)
    tab.page.get_by_label("Bot or owner").fill("dig")
    tab.page.get_by_label("Bot or owner").press("Enter")
    tab.page.wait_for_url(re.compile(r"q=dig"))
    assert [r["name"] for r in board_rows(tab)] == ["digger"]
    tab.shot("leaderboard-search")

    # Pages of ten: the second page continues where the API's does.
    tab.goto("/")
    tab.page.get_by_label("Per page").select_option("10")
    tab.page.wait_for_url(re.compile(r"page_size=10"))
    first = board_rows(tab)
    assert [r["name"] for r in first] == [e["name"] for e in board[:10]]
    tab.page.get_by_role("link", name="Next →").click()
    tab.page.wait_for_url(re.compile(r"cursor="))
    second = board_rows(tab)
    assert [(r["name"], int(r["rank"])) for r in second] == [
        (e["name"], e["position"]) for e in board[10:]
    ]
    assert tab.page.get_by_text("Page 2 of 2", exact=True).is_visible()
    tab.shot("leaderboard-page-2")


def test_leaderboard_reads_without_javascript_and_fits_a_phone(
    browser: Any, site: str, played_ladder: PlayedLadder
) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": 375, "height": 740})
    try:
        page = Page(context.new_page(), site)
        page.goto("/")
        shown = page.page.locator("#leaderboard tbody tr[data-bot]:not([data-suspended])")
        assert shown.count() == 14
        overflow = page.page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"the page is {overflow}px wider than a phone"
        page.shot("leaderboard-phone-no-js")
        page.goto(f"/bots/{played_ladder.bots['digger']}/")
        # The history is a table when there is no script to draw the chart.
        assert page.page.locator("#history tbody tr").count() == 10
        page.shot("bot-phone-no-js")
        assert not page.errors, page.errors
    finally:
        context.close()


def test_bot_page_chart_record_and_status(
    tab: Page, site: str, played_ladder: PlayedLadder
) -> None:
    digger = played_ladder.bots["digger"]
    detail = api(site, f"/api/v1/bots/{digger}/")
    history = api(site, f"/api/v1/bots/{digger}/rating-history/")
    tab.goto(f"/bots/{digger}/")
    chart = tab.page.locator("#rating-chart[data-points]")
    chart.wait_for()
    assert int(chart.get_attribute("data-points")) == len(history) == 10
    assert tab.page.locator("#rating-chart canvas").count() == 1
    # The 95 % band (rating ± 1.96 sigma from the ledger) is drawn with the line.
    assert chart.get_attribute("data-band") == "1"
    assert all(h["sigma_after"] > 0 for h in history)
    assert tab.page.locator("#history tbody tr").count() == len(history)
    assert tab.page.text_content("#bot-status") == "active"
    assert number(tab.page.get_attribute(".card .rating", "data-rating")) == detail["rating"]
    assert int(tab.page.text_content("#bot-games")) == detail["games"]
    tab.shot("bot")

    # The record against each opponent, against one computed from the API's matches.
    matches = api(site, f"/api/v1/matches/?bot={digger}&status=finished&page_size=200")
    expected: dict[str, list[int]] = {}
    for m in matches["results"]:
        mine = next(s["rank"] for s in m["seats"] if s["bot"] == digger)
        for s in m["seats"]:
            if s["bot"] != digger:
                line = expected.setdefault(s["bot_name"], [0, 0, 0, 0])
                line[0] += 1
                line[1 if mine < s["rank"] else 2 if mine > s["rank"] else 3] += 1
    shown = tab.page.eval_on_selector_all(
        "#opponents tbody tr",
        "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent.trim()))",
    )
    assert {r[0]: [int(x) for x in r[1:]] for r in shown} == expected
    # Sorting by a column is the script's: click "Behind" twice for the most first.
    header = tab.page.get_by_role("button", name="Behind")
    header.click()
    header.click()
    cells = tab.page.locator("#opponents tbody tr td:nth-child(4)").all_inner_texts()
    behind = [int(c) for c in cells]
    assert behind == sorted(behind, reverse=True)
    assert tab.page.get_attribute("#opponents th:nth-child(4)", "aria-sort") == "descending"

    ghost = played_ladder.bots["ghost"]
    tab.goto(f"/bots/{ghost}/")
    assert tab.page.text_content("#bot-status") == "suspended"
    assert "endpoint unreachable in matches" in tab.page.text_content("#suspended-reason")
    assert tab.page.locator("#bot-rank").count() == 0  # off the board
    tab.shot("bot-suspended")


def test_match_pages_show_the_apis_ranks_and_rating_changes(
    tab: Page, site: str, played_ladder: PlayedLadder
) -> None:
    for match_id in played_ladder.finished:
        detail = api(site, f"/api/v1/matches/{match_id}/")
        tab.goto(f"/matches/{match_id}/")
        rows = tab.page.eval_on_selector_all(
            "#seats tbody tr",
            """rows => rows.map(r => ({
                seat: parseInt(r.dataset.seat, 10),
                cells: Object.fromEntries(['rank', 'faults', 'before', 'after', 'change']
                    .map(c => [c, r.querySelector('td.' + c).textContent.trim()])),
                forfeit: (r.querySelector('.forfeit') || {}).textContent || '',
            }))""",
        )
        assert len(rows) == len(detail["seats"])
        for row in rows:
            seat = detail["seats"][row["seat"]]
            cells = row["cells"]
            assert int(cells["rank"]) == seat["rank"]
            assert int(cells["faults"]) == seat["faults"]
            assert number(cells["before"]) == seat["rating_before"]
            assert number(cells["after"]) == seat["rating_after"]
            assert number(cells["change"]) == pytest.approx(seat["rating_delta"], abs=1e-9)
            if seat["forfeit_reason"]:
                assert seat["forfeit_reason"] in row["forfeit"]
        assert [r["cells"]["rank"] for r in rows] == sorted(r["cells"]["rank"] for r in rows)
        # The replay download is the stored file.
        link = tab.page.get_attribute("#replay-download", "href")
        replay = tab.page.request.get(site + link)
        assert replay.status == 200
        assert hashlib.sha256(replay.body()).hexdigest() == detail["replay"]["sha256"]
        assert tab.page.locator("#replay-viewer[data-replay-url]").count() == 1
    forfeited = played_ladder.finished[9]  # ghost's dead endpoint
    tab.goto(f"/matches/{forfeited}/")
    assert tab.page.locator("tr[data-bot=ghost] .ended-forfeited").count() == 1
    tab.shot("match-with-forfeit")
    tab.goto(f"/matches/{played_ladder.finished[3]}/")
    tab.shot("match-four-seats")


def test_tournaments_and_now(tab: Page, site: str, played_ladder: PlayedLadder) -> None:
    tab.goto("/tournaments/")
    row = tab.page.locator("#tournaments tbody tr", has_text="Autumn Cup")
    cells = row.locator("td").all_inner_texts()
    assert (cells[2], cells[3]) == ("4", "3")  # bots, finished matches
    tab.shot("tournaments")
    row.get_by_role("link", name="Autumn Cup").click()
    tab.page.wait_for_url(f"**/tournaments/{played_ladder.tournament}/")
    cup = api(site, f"/api/v1/matches/?tournament={played_ladder.tournament}")["results"]
    played: dict[str, int] = {}
    for m in cup:
        for s in m["seats"]:
            played[s["bot_name"]] = played.get(s["bot_name"], 0) + 1
    standings = tab.page.eval_on_selector_all(
        "#standings tbody tr",
        "rows => rows.map(r => [r.cells[1].textContent.trim(), parseInt(r.cells[3].textContent)])",
    )
    assert dict(standings) == played
    assert tab.page.locator(".matches tbody tr").count() == len(cup) == 3
    tab.shot("tournament")

    tab.goto("/now/")
    queued = tab.page.locator("section:has(#queued-h) tbody")
    assert queued.get_by_role("link", name=f"#{played_ladder.queued}").count() == 1
    finished = tab.page.locator("section:has(#finished-h) tbody tr")
    assert finished.count() == len(played_ladder.finished)
    assert finished.first.get_by_role("link", name=f"#{played_ladder.finished[-1]}").count() == 1
    tab.shot("now")


def test_owner_creates_uploads_sets_endpoint_challenges_and_manages_tokens(
    tab: Page, site: str, played_ladder: PlayedLadder, orm: Any
) -> None:
    from ladder.bots.models import Bot

    sign_in(tab, "alice")
    page = tab.page
    assert {r for r in page.locator("#my-bots tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.bot)")} == {"digger", "dice"}  # fmt: skip
    assert_labelled(tab)
    tab.shot("dashboard")

    # A hosted bot, then a rejected upload (its reason shown, nothing stored), then a good one.
    page.get_by_label("Name").fill("web-hosted")
    page.get_by_label("hosted (uploaded Python)").check()
    page.get_by_role("button", name="Create the bot").click()
    page.wait_for_url("**/me/bots/*/")
    assert page.get_by_text("Bot web-hosted created.").is_visible()
    page.get_by_label("Source (.py or .zip)").set_input_files(
        files=[{"name": "bot.py", "mimeType": "text/x-python", "buffer": b"def act(:\n"}]
    )
    tab.expected_statuses.add(400)
    page.get_by_role("button", name="Upload and validate").click()
    report = page.locator("#upload-report")
    report.wait_for()
    assert "syntax error line 1" in report.inner_text()
    assert "upload rejected" in page.locator(".form-errors").inner_text()
    tab.shot("upload-rejected")
    with orm():
        hosted = Bot.objects.get(name="web-hosted")
        assert hosted.versions.count() == 0
    good = b"def act(obs, legal):\n    return 0\n"
    page.get_by_label("Source (.py or .zip)").set_input_files(
        files=[{"name": "bot.py", "mimeType": "text/x-python", "buffer": good}]
    )
    page.get_by_role("button", name="Upload and validate").click()
    page.wait_for_url(f"**/me/bots/{hosted.pk}/")
    assert page.get_by_text("Version 1 uploaded: pending until its smoke match").is_visible()
    assert "smoke match" in page.locator("#upload-explained").inner_text()
    # Pending until the workers play its smoke match (none run here: it stays pending).
    assert page.get_attribute("#versions tr[data-version='1']", "data-status") == "pending"
    assert (
        "waiting for its smoke match" in page.locator("#versions tr[data-version='1']").inner_text()
    )
    page.locator("#versions .validation-report summary").first.click()
    assert "ok: entry point bot.py" in page.locator("#versions pre.log").first.inner_text()
    tab.shot("upload-accepted")

    # A remote bot whose endpoint is set afterwards; a bad one is refused with a reason.
    page.get_by_role("link", name="My bots").click()
    page.get_by_label("Name").fill("web-remote")
    page.get_by_label("remote (registered endpoint)").check()
    page.get_by_role("button", name="Create the bot").click()
    page.wait_for_url("**/me/bots/*/")
    page.get_by_role("textbox", name="Endpoint").fill("10.1.2.3:5000")
    page.get_by_role("button", name="Set the endpoint").click()
    assert "private or non-public address" in page.locator(".form-errors").inner_text()
    page.get_by_role("textbox", name="Endpoint").fill(played_ladder.endpoint)
    page.get_by_role("button", name="Set the endpoint").click()
    page.wait_for_url("**/me/bots/*/")
    assert page.text_content("#current-endpoint") == played_ladder.endpoint
    tab.shot("endpoint-set")

    # A challenge against someone else's bot is queued as a match.
    page.get_by_label("Opponents").fill("mole")
    page.get_by_role("button", name="Queue the match").click()
    page.wait_for_url("**/matches/*/")
    assert page.get_by_text("Challenge queued as match").is_visible()
    assert page.text_content("h1 .status") == "queued"
    assert {r for r in page.locator("#seats tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.bot)")} == {"web-remote", "mole"}  # fmt: skip
    tab.shot("challenge-queued")

    # A token: shown once, works on the API, revoked, then refused.
    page.get_by_role("link", name="API tokens").click()
    page.get_by_label("Name").fill("ci")
    page.get_by_role("button", name="Create").click()
    secret = page.input_value("#token-secret")
    assert secret.startswith("ddl_")
    tab.shot("token-created")
    assert api_status(site, "/api/v1/tokens/", secret) == 200
    page.goto(site + "/me/tokens/")
    assert page.locator("#token-secret").count() == 0
    assert secret not in page.content()
    row = page.locator("#token-list tbody tr", has_text="ci")
    row.get_by_role("button", name="Revoke").click()
    page.wait_for_url("**/me/tokens/")
    assert page.locator("#token-list tbody tr", has_text="ci").locator(".state").inner_text() == (
        "revoked"
    )
    assert api_status(site, "/api/v1/tokens/", secret) == 401
    tab.shot("token-revoked")

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(site + "/")
    assert page.get_by_role("link", name="Sign in").is_visible()


def test_another_user_can_neither_see_nor_change_them(
    tab: Page, site: str, played_ladder: PlayedLadder, orm: Any
) -> None:
    from ladder.accounts.models import ApiToken
    from ladder.accounts.services import token_create
    from ladder.bots.models import Bot

    digger = played_ladder.bots["digger"]
    with orm():
        alices_token = token_create(user=Bot.objects.get(pk=digger).owner, name="alice-only")
        versions = Bot.objects.get(pk=digger).versions.count()

    tab.goto("/me/")  # anonymous: sent to sign in
    assert "/accounts/login/" in tab.page.url

    sign_in(tab, "bob")
    page = tab.page
    mine = page.locator("#my-bots tbody tr").evaluate_all("rows => rows.map(r => r.dataset.bot)")
    assert "digger" not in mine and "mole" in mine
    tab.goto(f"/me/bots/{digger}/", status=403)
    assert page.get_by_role("heading", name="Not allowed").is_visible()
    tab.shot("forbidden")
    tab.goto("/me/tokens/")
    assert "alice-only" not in page.content()

    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    headers = {"X-CSRFToken": csrf, "Referer": site + "/me/"}
    posted = page.request.post(
        site + f"/me/bots/{digger}/endpoint/", form={"endpoint": "127.0.0.1:1"}, headers=headers
    )
    assert posted.status == 403
    upload = page.request.post(
        site + f"/me/bots/{digger}/upload/",
        multipart={"file": {"name": "bot.py", "mimeType": "text/x-python", "buffer": b"x = 1\n"}},
        headers=headers,
    )
    assert upload.status == 403
    challenge = page.request.post(
        site + f"/me/bots/{digger}/challenge/", form={"opponents": "mole"}, headers=headers
    )
    assert challenge.status == 403
    revoke = page.request.post(
        site + f"/me/tokens/{alices_token.token.pk}/revoke/", headers=headers
    )
    assert revoke.status == 404
    no_csrf = page.request.post(site + "/me/tokens/", form={"name": "sneaky"})
    assert no_csrf.status == 403 and "could not be accepted" in no_csrf.text()
    with orm():
        assert Bot.objects.get(pk=digger).versions.count() == versions
        assert ApiToken.objects.get(pk=alices_token.token.pk).revoked_at is None
        assert not ApiToken.objects.filter(name="sneaky").exists()


def test_error_pages_and_keyboard(tab: Page, site: str, played_ladder: PlayedLadder) -> None:
    tab.goto("/no/such/page/", status=404)
    assert tab.page.get_by_role("heading", name="Nothing down here").is_visible()
    assert tab.page.locator("header.site nav").is_visible()  # the site's own frame
    tab.shot("404")
    tab.goto("/bots/999999/", status=404)
    assert tab.page.get_by_text("No such bot.").is_visible()
    api_404 = tab.page.request.get(site + "/api/v1/no/such/")
    assert api_404.status == 404 and api_404.json()["error"] == "not_found"

    # Keyboard: the first Tab reaches the skip link, which moves focus to the content.
    tab.goto("/")
    tab.page.keyboard.press("Tab")
    assert tab.page.evaluate("document.activeElement.textContent") == "Skip to content"
    tab.page.keyboard.press("Enter")
    assert tab.page.evaluate("document.activeElement.id") == "content"
    tab.page.keyboard.press("Tab")
    focused = tab.page.evaluate("document.activeElement.tagName")
    assert focused in {"INPUT", "A", "SELECT", "BUTTON"}


def test_leaderboard_bot_now_and_match_pages_per_ladder(
    tab: Page, site: str, played_ladder: PlayedLadder
) -> None:
    """A second ladder (dd-2): the board switches to it, the bot page shows both, all as the API."""
    tab.goto("/")
    assert tab.page.text_content("#board-ladder") == "dd-1"
    tab.page.get_by_label("Ladder", exact=True).select_option("dd-2")
    tab.page.wait_for_url(re.compile(r"ladder=dd-2"))
    assert tab.page.text_content("#board-ladder") == "dd-2"
    board = api(site, "/api/v1/leaderboard/?ladder=dd-2&page_size=200")["results"]
    shown = [(r["name"], int(r["rank"]), r["rating"], r["games"]) for r in board_rows(tab)]
    assert shown == [(e["name"], e["position"], e["rating"], e["games"]) for e in board]
    games = {name: n for name, _, _, n in shown}
    assert (games["digger"], games["mole"], games["lurker"]) == (3, 2, 0)
    tab.shot("leaderboard-dd-2")
    # Sorting and paging keep the ladder.
    tab.page.get_by_role("link", name="Games").click()
    tab.page.wait_for_url(re.compile(r"sort=-games"))
    assert "ladder=dd-2" in tab.page.url
    assert [r["games"] for r in board_rows(tab)][:2] == [3, 2]

    # The bot page, from the dd-2 board: its standing on each ladder, dd-2's history.
    digger = played_ladder.bots["digger"]
    tab.page.locator("#leaderboard").get_by_role("link", name="digger", exact=True).click()
    tab.page.wait_for_url(f"**/bots/{digger}/?ladder=dd-2")
    detail = api(site, f"/api/v1/bots/{digger}/")
    lines = tab.page.eval_on_selector_all(
        "#ladders tbody tr",
        """rows => rows.map(r => ({
            ladder: r.dataset.ladder,
            rank: parseInt(r.querySelector('td.rank').textContent, 10),
            rating: parseFloat(r.querySelector('.rating').dataset.rating),
            games: parseInt(r.querySelector('td.games').textContent, 10),
            wins: parseInt(r.querySelector('td.wins').textContent, 10),
        }))""",
    )
    for line, entry in zip(lines, detail["ratings"], strict=True):
        position = next(
            e["position"]
            for e in api(site, f"/api/v1/leaderboard/?ladder={entry['ladder']}")["results"]
            if e["id"] == digger
        )
        assert line == {
            "ladder": entry["ladder"],
            "rank": position,
            "rating": entry["rating"],
            "games": entry["games"],
            "wins": entry["wins"],
        }
    history = api(site, f"/api/v1/bots/{digger}/rating-history/?ladder=dd-2")
    chart = tab.page.locator("#rating-chart[data-points]")
    chart.wait_for()
    assert int(chart.get_attribute("data-points")) == len(history) == 3
    assert tab.page.text_content("#bot-ladder") == "dd-2"
    tab.shot("bot-ladders")
    tab.page.get_by_role("link", name="history on dd-1").click()
    tab.page.wait_for_url(re.compile(r"ladder=dd-1"))
    tab.page.locator("#rating-chart[data-points]").wait_for()
    assert tab.page.get_attribute("#rating-chart", "data-points") == "10"

    # A dd-2 match says so; the "now" view narrows to one ladder.
    tab.goto(f"/matches/{played_ladder.on_dd2[0]}/")
    assert tab.page.text_content("#match-ladder").strip() == "ladder dd-2"
    tab.goto("/now/")
    tab.page.get_by_label("Ladder", exact=True).select_option("dd-2")
    tab.page.wait_for_url(re.compile(r"ladder=dd-2"))
    finished = tab.page.locator("section:has(#finished-h) tbody tr")
    listed = api(site, "/api/v1/matches/?ladder=dd-2&status=finished")["results"]
    assert finished.count() == len(listed) == len(played_ladder.on_dd2)
    tab.shot("now-dd-2")


def test_the_replay_viewer_plays_on_the_match_page(
    tab: Page, site: str, played_ladder: PlayedLadder
) -> None:
    match_id = played_ladder.finished[3]  # four seats
    detail = api(site, f"/api/v1/matches/{match_id}/")
    tab.goto(f"/matches/{match_id}/")
    tab.page.wait_for_selector("#replay-viewer [data-ddv][data-loaded=true]")
    viewer = tab.page.locator("#replay-viewer [data-ddv]")
    viewer.locator("[data-role=play]").click()
    wait_for_js(tab.page, "Number(document.querySelector('[data-ddv]').dataset.pos) >= 3")
    viewer.locator("[data-role=play]").click()  # pause
    viewer.locator("[data-role=last]").click()
    assert "#d=" in tab.page.url  # the position is in the address, to share
    ranks = viewer.locator("[data-role=ranks] tbody tr").evaluate_all(
        "rows => rows.map(r => [Number(r.dataset.seat), Number(r.dataset.rank),"
        " r.querySelector('[data-role=rating]').textContent])"
    )
    assert {seat: rank for seat, rank, _ in ranks} == {
        s["seat"]: s["rank"] for s in detail["seats"]
    }
    for seat, _, rating in ranks:
        assert f"{detail['seats'][seat]['rating_after']:.2f}" in rating
    assert_labelled(tab)
    tab.shot("match-replay-viewer")

    # Match rows link to the replay; the viewer's page is in the site's frame.
    tab.goto("/now/")
    finished = tab.page.locator("section:has(#finished-h)")
    finished.get_by_role("link", name=f"replay of match {match_id}", exact=True).click()
    tab.page.wait_for_url(f"**/replays/matches/{match_id}/")
    tab.page.wait_for_selector("[data-ddv][data-loaded=true]")
    assert tab.page.locator("header.site nav").is_visible()
    tab.page.get_by_role("link", name="Replay viewer").click()
    tab.page.wait_for_url("**/replays/")
    assert tab.page.get_attribute("nav a[aria-current=page]", "href") == "/replays/"
    assert tab.page.locator("[data-role=drop]").is_visible()
    tab.shot("replay-viewer-standalone")


def sign_out(tab: Page) -> None:
    tab.page.get_by_role("button", name="Sign out").click()
    tab.page.wait_for_url(tab.base + "/")


def test_the_owner_sees_their_hosted_seat_log_and_nobody_else(
    tab: Page, site: str, played_ladder: PlayedLadder
) -> None:
    if played_ladder.hosted_match is None:
        require_sandbox()  # no bubblewrap here: skipped (a failure in CI)
    match_id = played_ladder.hosted_match
    detail = api(site, f"/api/v1/matches/{match_id}/")
    seat = next(s["seat"] for s in detail["seats"] if s["bot_name"] == "lurker")
    log_url = f"/api/v1/matches/{match_id}/seats/{seat}/log/"

    tab.goto(f"/matches/{match_id}/")  # anonymous
    assert tab.page.locator("#seat-logs").count() == 0
    assert "[sandbox]" not in tab.page.content()
    assert tab.page.request.get(site + log_url).status in (401, 403)
    sign_in(tab, "alice")  # owns the other seat's bot (remote: the runner's note), not lurker
    tab.goto(f"/matches/{match_id}/")
    assert tab.page.locator(f"#seat-logs details.seat-log[data-seat='{seat}']").count() == 0
    assert "[sandbox]" not in tab.page.content()
    assert tab.page.request.get(site + log_url).status == 403
    sign_out(tab)

    sign_in(tab, "bob")
    tab.goto(f"/matches/{match_id}/")
    logs = tab.page.locator("#seat-logs")
    assert logs.is_visible()
    entry = logs.locator(f"details.seat-log[data-seat='{seat}']")
    assert entry.locator("summary").inner_text().startswith("lurker (seat")
    excerpt = entry.locator("pre.log").inner_text()
    assert "[sandbox] serving after" in excerpt and "listening on unix" in excerpt
    whole = tab.page.request.get(site + log_url)  # the link, with bob's session
    assert whole.status == 200 and whole.headers["content-type"].startswith("text/plain")
    assert excerpt.strip() in whole.text().replace("\r", "")
    assert (
        entry.get_by_role("link", name=f"The whole log of seat {seat}").get_attribute("href")
        == log_url
    )
    tab.shot("match-seat-log")

    # Bob's manage page: the version's status, smoke outcome and smoke log.
    tab.goto(f"/me/bots/{played_ladder.bots['lurker']}/")
    row = tab.page.locator("#versions tr[data-version='1']")
    assert row.get_attribute("data-status") == "valid" and "plays" in row.inner_text()
    assert row.locator(".smoke-outcome").inner_text().startswith("smoke match: passed")
    row.locator(".smoke-log summary").click()
    assert "[sandbox] serving after" in row.locator(".smoke-log pre.log").inner_text()
    tab.shot("manage-hosted-bot")


README_IMAGES = os.environ.get("LADDER_README_IMAGES", "")
README_IMAGE_MAX_BYTES = 400_000


def test_readme_images(browser: Any, site: str, played_ladder: PlayedLadder) -> None:
    """The README's pictures of the site, from this really played ladder.

    ``LADDER_README_IMAGES=docs/images`` writes ``leaderboard.png`` and
    ``replay-viewer.png`` there (to commit); otherwise they land with the other
    screenshots as ``readme-*.png``.
    """
    out, prefix = (Path(README_IMAGES), "") if README_IMAGES else (SCREENSHOTS, "readme-")
    out.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(viewport={"width": 1100, "height": 700}, color_scheme="light")
    try:
        tab = Page(context.new_page(), site)
        tab.goto("/")
        board = out / f"{prefix}leaderboard.png"
        tab.page.screenshot(path=str(board))
        match_id = played_ladder.finished[3]  # four seats
        tab.goto(f"/replays/matches/{match_id}/")
        tab.page.wait_for_selector("[data-ddv][data-loaded=true]")
        # Late in the game: faces revealed, tools tired, objectives on their way.
        late = int(tab.page.get_attribute("[data-ddv]", "data-decisions")) * 4 // 5
        tab.page.evaluate(f"location.hash = '#d={late}'")
        wait_for_js(tab.page, f"document.querySelector('[data-ddv]').dataset.pos === '{late}'")
        viewer = out / f"{prefix}replay-viewer.png"
        tab.page.locator("[data-ddv]").screenshot(path=str(viewer))
        assert not tab.errors, tab.errors
    finally:
        context.close()
    for image in (board, viewer):
        size = image.stat().st_size
        assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert 10_000 < size < README_IMAGE_MAX_BYTES, (image, size)


def test_an_author_chooses_what_they_are_told_and_unsubscribes_in_one_click(
    tab: Page, site: str, played_ladder: PlayedLadder, orm: Any
) -> None:
    from urllib.parse import urlsplit

    from ladder.accounts.models import User
    from ladder.notifications.kinds import Channel, Kind
    from ladder.notifications.links import unsubscribe_link
    from ladder.notifications.selectors import choice_of

    sign_in(tab, "alice")
    page = tab.page
    page.get_by_role("link", name="Notifications").click()
    page.wait_for_url("**/me/notifications/")
    assert_labelled(tab)
    page.get_by_label("Webhook URL").fill("http://127.0.0.1:9/hooks/ladder")  # dev mode
    page.get_by_label("A new version passed its smoke match by e-mail").check()
    page.get_by_role("button", name="Save").click()
    secret = page.input_value("#webhook-secret")  # shown once
    assert secret.startswith("whsec_")
    tab.shot("notifications-webhook-secret")
    page.goto(site + "/me/notifications/")
    assert page.locator("#webhook-secret").count() == 0 and secret not in page.content()
    assert page.get_by_label("A new version passed its smoke match by e-mail").is_checked()
    with orm():
        alice = User.objects.get(username="alice")
        assert choice_of(user_id=alice.pk, kind=Kind.SMOKE_PASSED).email
        link = unsubscribe_link(user_id=alice.pk, kind=Kind.SMOKE_PASSED, channel=Channel.EMAIL)
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(site + "/")
    # The link of an e-mail, followed by someone not signed in: one button.
    tab.goto(urlsplit(link).path)
    page.get_by_role("button", name="Unsubscribe", exact=True).click()
    assert "no more" in page.locator("#unsubscribed").inner_text()
    tab.shot("unsubscribed")
    with orm():
        assert not choice_of(user_id=alice.pk, kind=Kind.SMOKE_PASSED).email
