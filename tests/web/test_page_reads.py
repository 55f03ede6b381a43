"""The pages' cheaper reads answer what the ORM reads they replaced answered.

A bot's position from its rating entries' query (``bot_ladder_standings``), a
search's count from its page query (``WindowCountPaginator``) and the match lists
as plain rows (``MatchLines``) must give the same figures and the same markup as
``bot_ladder_positions``, Django's ``Paginator`` and ``match_rows_list``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from django.core.paginator import Paginator
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from ladder.bots.models import Bot
from ladder.bots.services import bot_auto_suspend
from ladder.common import keyset
from ladder.common.pagination import WindowCountPaginator, with_total
from ladder.matches import bot_selectors as bot_match_selectors
from ladder.matches import selectors as match_selectors
from ladder.matches.models import Match
from ladder.ratings import selectors as rating_selectors
from ladder.ratings.models import BotRating
from ladder.web.rows import match_rows
from tests.web.test_pages import grow, two_ladders  # noqa: F401 (autouse: the pages' ladders)

pytestmark = pytest.mark.django_db


def test_standings_positions_equal_the_board_positions(make_user: Any, make_bot: Any) -> None:
    world = grow(make_user, make_bot, owners=3, bots_each=3, rounds=4)
    bots = world["bots"]
    # Ties in score (the id breaks them), a suspended and a retired bot ahead of others.
    BotRating.objects.filter(bot__in=bots[:4]).update(score=1000)
    bot_auto_suspend(bot_id=bots[1].pk, reason="forfeits")
    Bot.objects.filter(pk=bots[2].pk).update(retired_at="2026-01-01T00:00:00Z")
    for bot in Bot.objects.filter(pk__in=[b.pk for b in bots]):
        entries, positions = rating_selectors.bot_ladder_standings(bot=bot)
        assert positions == rating_selectors.bot_ladder_positions(bot_id=bot.pk), bot.name
        assert [e.pk for e in entries] == [e.pk for e in bot.ratings.order_by("ladder")]
    suspended = Bot.objects.get(pk=bots[1].pk)
    assert rating_selectors.bot_ladder_standings(bot=suspended)[1] == {}


def test_a_search_counted_in_its_page_query_pages_as_the_paginator(
    make_user: Any, make_bot: Any
) -> None:
    grow(make_user, make_bot, owners=3, bots_each=4, rounds=2)
    qs = rating_selectors.leaderboard_search(query="b", include_inactive=True)
    for number in (1, 2, 3, 4, 99, 0, -1, "2", "x", "", None, "2.0"):
        plain = Paginator(qs, 5).get_page(number)
        counted = WindowCountPaginator(with_total(qs), 5).get_page(number)
        assert counted.number == plain.number, number
        assert counted.paginator.count == plain.paginator.count == 12
        assert [b.pk for b in counted] == [b.pk for b in plain], number
    empty = rating_selectors.leaderboard_search(query="nobody-is-called-this")
    assert WindowCountPaginator(with_total(empty), 5).get_page(1).paginator.count == 0


def test_a_rest_search_reads_its_count_with_its_page(make_user: Any, make_bot: Any) -> None:
    grow(make_user, make_bot, owners=2, bots_each=3, rounds=2)
    client = Client()
    with CaptureQueriesContext(connection) as ctx:
        body = client.get("/api/v1/leaderboard/?search=b&page_size=4&page=2").json()
    assert len(ctx.captured_queries) == 1
    assert body["count"] == 6 and [r["position"] for r in body["results"]] == [5, 6]
    assert client.get("/api/v1/leaderboard/?search=b&page_size=4&page=3").status_code == 404
    assert client.get("/api/v1/leaderboard/?search=zzz").json()["count"] == 0


def test_match_lines_render_as_the_match_rows(make_user: Any, make_bot: Any) -> None:
    world = grow(make_user, make_bot, owners=2, bots_each=3, rounds=6)
    bot = world["bots"][0]
    for page in (slice(0, 5), slice(5, 10), slice(50, 60)):
        lines = bot_match_selectors.BotMatchLines(bot.pk)[page]
        models = match_selectors.match_rows_list(bot_id=bot.pk)[page]
        assert match_rows(lines, bot) == match_rows(models, bot)
    assert len(bot_match_selectors.BotMatchLines(bot.pk)) == bot_match_selectors.bot_match_count(
        bot_id=bot.pk
    )
    for status in (Match.Status.FINISHED, Match.Status.QUEUED):
        for ladder in ("", "dd-2"):
            lines = match_selectors.match_lines(status=status, ladder=ladder)
            models = match_selectors.match_rows_list(status=status, ladder=ladder)
            assert lines.count() == models.count()
            assert match_rows(lines[:25]) == match_rows(models[:25])
    cup = match_selectors.match_lines(tournament_id=world["cup"].pk)
    assert match_rows(cup[:20]) == match_rows(
        match_selectors.match_rows_list(tournament_id=world["cup"].pk)[:20]
    )


def test_deep_match_pages_seek_the_rows_an_offset_reads(make_user: Any, make_bot: Any) -> None:
    """A slice of a match list below its top finds its start on the list's index
    (``MatchLines``' seek): the same lines as the ORM's OFFSET, at every page size, up to
    and past the end, for a bot's matches, a tournament's and the queue (oldest first)."""
    world = grow(make_user, make_bot, owners=2, bots_each=3, rounds=12)
    bot = world["bots"][0]
    cup = world["cup"].pk
    queued = Match.Status.QUEUED
    lists = [
        (bot_match_selectors.BotMatchLines(bot.pk), match_selectors.match_rows_list(bot_id=bot.pk)),
        (match_selectors.match_lines(tournament_id=cup),
         match_selectors.match_rows_list(tournament_id=cup)),
        (match_selectors.match_lines(status=Match.Status.FINISHED, ladder="dd-2"),
         match_selectors.match_rows_list(status=Match.Status.FINISHED, ladder="dd-2")),
        (match_selectors.match_lines(status=queued, oldest_first=True),
         match_selectors.match_rows_list(status=queued).order_by("id")),
        (match_selectors.match_lines(), match_selectors.match_rows_list()),
    ]  # fmt: skip
    for lines, models in lists:
        total = models.count()
        assert total > 6 or models.query.where, "a list long enough to page"
        for size in (1, 2, 3, 7):
            for start in range(0, total + size + 1, size):
                shown = lines[start : start + size]
                assert match_rows(shown, bot) == match_rows(models[start : start + size], bot)
                assert len(shown) == max(0, min(size, total - start)), (start, size)


def test_a_deep_page_of_a_bot_s_matches_costs_what_a_near_one_does(
    make_user: Any, make_bot: Any
) -> None:
    world = grow(make_user, make_bot, owners=1, bots_each=4, rounds=30)
    bot = world["bots"][0]
    count = bot_match_selectors.bot_match_count(bot_id=bot.pk)
    last = -(-count // 20)
    assert last >= 3, "three pages of 20 at least"
    client = Client()

    def counted(url: str) -> tuple[list[str], bytes]:
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(url)
        assert response.status_code == 200, url
        return [q["sql"] for q in ctx.captured_queries], response.content

    near, _ = counted(f"/bots/{bot.pk}/?page=2")
    deep, body = counted(f"/bots/{bot.pk}/?page={last}")
    assert len(deep) == len(near)
    joined = [sql for sql in deep if '"matches_match"' in sql and " OFFSET " in sql]
    assert all(sql.endswith(" OFFSET 0") for sql in joined), joined
    oldest = match_selectors.match_rows_list(bot_id=bot.pk).order_by("id").first()
    assert oldest is not None and f"/matches/{oldest.pk}/".encode() in body
    assert f"Page {last} of {last}".encode() in body
    cup = world["cup"].pk
    tournament_near, _ = counted(f"/tournaments/{cup}/?page=2")
    tournament_deep, _ = counted(f"/tournaments/{cup}/?page=3")
    assert len(tournament_deep) == len(tournament_near)


def _uneven_board(make_user: Any, make_bot: Any) -> list[Bot]:
    """A board with ties in score, a suspended bot and a retired one among the first."""
    world = grow(make_user, make_bot, owners=3, bots_each=4, rounds=4)
    bots = world["bots"]
    BotRating.objects.filter(bot__in=bots[:5]).update(score=1000)
    bot_auto_suspend(bot_id=bots[1].pk, reason="forfeits")
    bot_auto_suspend(bot_id=bots[7].pk, reason="forfeits")
    Bot.objects.filter(pk=bots[2].pk).update(retired_at="2026-01-01T00:00:00Z")
    return bots


@pytest.mark.parametrize("include_inactive", [True, False])
def test_pages_by_number_seek_the_rows_the_paginator_reads(
    make_user: Any, make_bot: Any, include_inactive: bool
) -> None:
    _uneven_board(make_user, make_bot)
    qs = rating_selectors.leaderboard_search(include_inactive=True)
    if not include_inactive:
        qs = rating_selectors.leaderboard_list()
    bound = partial(rating_selectors.leaderboard_row_at, include_inactive=include_inactive)
    for size in (1, 2, 5):
        for number in (1, 2, 3, 4, 6, 11, 99, 0, -1, "2", "x", "", None):
            plain = Paginator(qs, size).get_page(number)
            seeking = keyset.SeekPaginator(qs, size, bound=bound).get_page(number)
            assert seeking.number == plain.number, (size, number)
            assert seeking.paginator.count == plain.paginator.count
            assert [b.pk for b in seeking] == [b.pk for b in plain], (size, number)
    counted = keyset.SeekPaginator(qs, 2, bound=bound, count=qs.count())
    assert [b.pk for b in counted.page(3)] == [b.pk for b in Paginator(qs, 2).page(3)]
    assert rating_selectors.leaderboard_row_at(0) is None
    assert rating_selectors.leaderboard_row_at(qs.count() + 1) is None


def test_a_run_of_the_board_is_numbered_as_the_whole_board(make_user: Any, make_bot: Any) -> None:
    bots = _uneven_board(make_user, make_bot)
    Bot.objects.filter(pk__in=[b.pk for b in bots[::3]]).update(kind=Bot.Kind.REMOTE)
    for kind in ("", "hosted", "remote"):
        board = list(rating_selectors.leaderboard_search(kind=kind, include_inactive=True))
        window = rating_selectors.leaderboard_positions(bot_ids=[b.pk for b in board], kind=kind)
        for size in (1, 3, 4):
            for start in range(0, len(board), size):
                run = board[start : start + size]
                assert rating_selectors.leaderboard_positions_from(run, kind=kind) == {
                    b.pk: window[b.pk] for b in run if b.pk in window
                }, (kind, size, start)


def test_deep_board_pages_cost_what_a_near_one_does(make_user: Any, make_bot: Any) -> None:
    _uneven_board(make_user, make_bot)
    grow(make_user, make_bot, owners=4, bots_each=10, rounds=1)  # 52 bots: 3 pages of 25
    client = Client()

    def counted(url: str) -> tuple[int, bytes]:
        with CaptureQueriesContext(connection) as ctx:
            response = client.get(url)
        assert response.status_code == 200, url
        return len(ctx.captured_queries), response.content

    near, _ = counted("/?page=2&page_size=25")
    deep, body = counted("/?page=3&page_size=25")
    assert deep == near
    assert b"Page 3 of 3" in body and b'href="?page=2&amp;page_size=25"' in body
    rest = client.get("/api/v1/leaderboard/?page_size=100").json()["results"]
    for size, number in ((2, 3), (3, 2), (1, 9)):
        page = client.get(f"/api/v1/leaderboard/?page_size={size}&page={number}").json()
        first = (number - 1) * size
        assert page["results"] == rest[first : first + size], (size, number)
        assert page["count"] == len(rest) == rating_selectors.leaderboard_list().count()
    everyone = client.get("/api/v1/leaderboard/?page_size=100&include_inactive=true").json()
    page = client.get("/api/v1/leaderboard/?page_size=2&page=4&include_inactive=true").json()
    assert page["results"] == everyone["results"][6:8]
    assert page["count"] == everyone["count"] == len(everyone["results"]) > len(rest)
