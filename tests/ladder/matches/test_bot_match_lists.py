"""A bot's matches, on every list that shows them, read from its seats' index: the same
matches in the same order as the list of all matches filtered by the bot, page after page
(REST by its cursor, gRPC's page by the last id, the site's pages by number), with the
match's own filters; and a finished season's table page by page in its official order."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from rest_framework.test import APIClient

from ladder.matches import bot_selectors, selectors
from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.ratings import selectors as rating_selectors
from ladder.ratings.models import Season, SeasonStanding
from tests.ladder.conftest import record

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_too]


@pytest.fixture
def ladder(make_user: Any, make_bot: Any) -> dict[str, Any]:
    """Five bots of five owners; bot 0 sits in every third match, finished or queued."""
    bots = [make_bot(make_user(f"user{i}"), f"bot{i}") for i in range(5)]
    mine = []
    for i in range(30):
        seated = (
            [bots[0], bots[1 + i % 4]] if i % 3 == 0 else [bots[1 + i % 4], bots[1 + (i + 1) % 4]]
        )
        match = match_create(bot_ids=[b.pk for b in seated])
        if i % 6 != 3:  # some of the bot's matches stay queued
            record(match, [1, 2])
        if bots[0] in seated:
            mine.append(match.pk)
    return {"bots": bots, "mine": sorted(mine, reverse=True)}


def _walk(api: APIClient, url: str) -> list[int]:
    ids: list[int] = []
    while url:
        r = api.get(url)
        assert r.status_code == 200, r.content
        ids += [m["id"] for m in r.json()["results"]]
        url = r.json()["next"] or ""
    return ids


@pytest.mark.parametrize("status", ["", "finished", "queued"])
def test_rest_pages_of_a_bot_are_its_matches_newest_first(
    ladder: dict[str, Any], status: str
) -> None:
    bot = ladder["bots"][0]
    expected = list(selectors.match_list(bot_id=bot.pk, status=status).values_list("pk", flat=True))
    assert expected and len(expected) == len(set(expected))
    if not status:
        assert expected == ladder["mine"]
    api = APIClient()
    query = f"bot={bot.pk}&page_size=3" + (f"&status={status}" if status else "")
    assert _walk(api, f"/api/v1/matches/?{query}") == expected
    # Every match is the list's whole match: seats, the bot's among them.
    first = api.get(f"/api/v1/matches/?{query}").json()["results"][0]
    assert bot.pk in [s["bot"] for s in first["seats"]] and first["status"]
    # A cursor is the list's own (a match id): one from the list of all matches reads
    # the bot's list from the same place.
    everything = api.get("/api/v1/matches/?page_size=10").json()["next"]
    cursor = parse_qs(urlsplit(everything).query)["cursor"][0]
    last_shown = list(Match.objects.order_by("-id").values_list("pk", flat=True))[9]
    rest = [pk for pk in expected if pk < last_shown]
    assert _walk(api, f"/api/v1/matches/?{query}&cursor={cursor}") == rest
    # And back: the previous page of the bot's second page is its first.
    second = api.get(api.get(f"/api/v1/matches/?{query}").json()["next"]).json()
    back = api.get(second["previous"]).json()
    assert [m["id"] for m in back["results"]] == expected[:3]


def test_grpc_pages_of_a_bot_by_the_last_id(ladder: dict[str, Any]) -> None:
    bot = ladder["bots"][0]
    seen: list[int] = []
    before = None
    while True:
        page, before = bot_selectors.bot_match_page(bot_id=bot.pk, before=before, size=4)
        seen += [m.pk for m in page]
        assert all(len(m.seats.all()) == 2 for m in page)  # seats as rows, no query each
        for m in page:  # the reveal rule's answer came with the row: the same as asked
            fresh = Match.objects.get(pk=m.pk)
            assert selectors.match_reveal(m) == selectors.match_reveal(fresh)
        if before is None:
            break
    assert seen == ladder["mine"]
    finished, _ = bot_selectors.bot_match_page(bot_id=bot.pk, status="finished", size=100)
    assert [m.pk for m in finished] == [
        pk for pk in ladder["mine"] if Match.objects.get(pk=pk).status == "finished"
    ]
    assert bot_selectors.bot_match_page(bot_id=10**9) == ([], None)


def test_site_pages_of_a_bot_by_number(ladder: dict[str, Any]) -> None:
    bot = ladder["bots"][0]
    lines = bot_selectors.BotMatchLines(bot.pk)
    assert len(lines) == len(ladder["mine"])
    pages = [lines[i : i + 4] for i in range(0, len(ladder["mine"]), 4)]
    assert [line.pk for page in pages for line in page] == ladder["mine"]


@pytest.mark.parametrize("positions", [[1, 2, 3, 4, 5], [1, 2, 4, 5, 9]])
def test_a_finished_seasons_table_page_by_page(
    ladder: dict[str, Any], positions: list[int]
) -> None:
    """Pages of the table in official order, its positions 1..n (as a season's end writes
    them) or with gaps (``rerate`` leaves out bots that did not play): the same rows as
    the whole table sliced, over REST too."""
    season = Season.objects.create(
        ladder="dd-1", number=7, system="elo", started_at="2026-01-01T00:00Z",
        ended_at="2026-02-01T00:00Z",
    )  # fmt: skip
    for bot, position in zip(reversed(ladder["bots"]), positions, strict=True):
        SeasonStanding.objects.create(
            season=season, bot=bot, rating=1500, sigma=10, score=1400, games=3, wins=1,
            official_rating=1500, official_sigma=5, official_position=position,
        )  # fmt: skip
    whole = list(rating_selectors.season_standings(season=season))
    assert [s.official_position for s in whole] == positions
    table = rating_selectors.season_table(season=season)
    assert len(table) == 5 and table.dense() == (positions[-1] == 5)
    for size in (1, 2, 3):
        paged = [s for i in range(0, 5, size) for s in table[i : i + size]]
        assert [s.pk for s in paged] == [s.pk for s in whole], size
        assert [s.bot.owner.username for s in paged] == [s.bot.owner.username for s in whole]
    assert table[5:10] == [] and table[2:2] == []
    api = APIClient()
    r = api.get("/api/v1/seasons/7/standings/?ladder=dd-1&page=2&page_size=2").json()
    assert r["count"] == 5
    assert [row["bot_id"] for row in r["results"]] == [s.bot_id for s in whole[2:4]]
    assert [row["position"] for row in r["results"]] == positions[2:4]
    assert [row["owner"] for row in r["results"]] == [s.bot.owner.username for s in whole[2:4]]


def test_the_season_page_shows_its_table_a_page_at_a_time(
    ladder: dict[str, Any], client: Any, monkeypatch: Any
) -> None:
    """The leaderboard's ``?season=`` of a finished season: its table, 100 lines a page
    with links to the others (it had none: past the first 100 a table was out of reach)."""
    import ladder.web.pages as pages

    season = Season.objects.create(
        ladder="dd-1", number=3, system="elo", started_at="2026-01-01T00:00Z",
        ended_at="2026-02-01T00:00Z",
    )  # fmt: skip
    for n, bot in enumerate(ladder["bots"], start=1):
        SeasonStanding.objects.create(
            season=season, bot=bot, rating=1500, sigma=10, score=1400, games=3, wins=1,
            official_rating=1600 - n, official_sigma=5, official_position=n,
        )  # fmt: skip
    html = client.get("/?season=3").content.decode()
    assert 'id="season-table"' in html and 'id="leaderboard"' not in html
    assert html.index(">bot0<") < html.index(">bot4<")
    assert 'aria-label="Season table pages"' not in html  # one page
    monkeypatch.setattr(pages, "SEASON_TABLE_PAGE", 2)
    html = client.get("/?season=3&page=2").content.decode()
    assert 'aria-label="Season table pages"' in html and "Page 2 of 3" in html
    table = html[html.index('id="season-table"') : html.index("</table>")]
    shown = [f">bot{i}<" in table for i in range(5)]
    assert shown == [False, False, True, True, False]
