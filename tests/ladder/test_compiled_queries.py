"""``ladder.common.compiled``: a query compiled once answers what the ORM answers, for
every argument, slice and thread; a marker the SQL does not carry is refused."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection
from django.db.models import QuerySet

from ladder.common.compiled import SLICE, Compiled, marker, text_marker
from ladder.matches import bot_selectors as bot_match_selectors
from ladder.matches import selectors as match_selectors
from ladder.matches.models import Match, MatchSeat
from ladder.ratings import selectors as rating_selectors
from tests.web.test_pages import grow, two_ladders  # noqa: F401 (autouse: the pages' ladders)

pytestmark = pytest.mark.django_db(transaction=True)


def _seats(bot_id: int, status: str) -> QuerySet[MatchSeat]:
    return (
        MatchSeat.objects.filter(bot_id=bot_id, match__status=status)
        .order_by("-match_id")
        .values_list("match_id", "seat", "rank", "match__created_at", "match__ladder")
    )


SEATS = Compiled(_seats, [marker(1), text_marker(1)])
PAGE = Compiled(
    lambda b, s: _seats(b, s)[SLICE[0] : SLICE[0] + SLICE[1]],
    [marker(1), text_marker(1)],
    sliced=True,
)


def test_compiled_rows_are_the_orms(make_user: Any, make_bot: Any) -> None:
    world = grow(make_user, make_bot, owners=2, bots_each=3, rounds=4)
    for bot in world["bots"]:
        for status in (Match.Status.FINISHED, Match.Status.QUEUED, "nothing"):
            orm = list(_seats(bot.pk, status))
            assert SEATS.rows(bot.pk, status) == orm, (bot.name, status)
            for offset, limit in ((0, 2), (1, 3), (5, 1), (50, 5)):
                assert (
                    PAGE.rows(bot.pk, status, offset=offset, limit=limit)
                    == (orm[offset : offset + limit])
                )
    with pytest.raises(ValueError, match="limit"):
        PAGE.rows(world["bots"][0].pk, Match.Status.FINISHED)


def test_each_thread_compiles_for_its_own_connection(make_user: Any, make_bot: Any) -> None:
    world = grow(make_user, make_bot, owners=2, bots_each=2, rounds=3)
    bot = world["bots"][0]
    expected = list(_seats(bot.pk, Match.Status.FINISHED))
    answers: list[Any] = []

    def read() -> None:
        try:
            answers.append(SEATS.rows(bot.pk, Match.Status.FINISHED))
        finally:
            connection.close()

    threads = [threading.Thread(target=read) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert answers == [expected] * 3


def test_a_marker_missing_from_the_sql_is_refused() -> None:
    # A "contains" filter makes a pattern of its value: the marker never reaches the SQL.
    bad = Compiled(
        lambda name: MatchSeat.objects.filter(bot__name__contains=name).values_list("pk"),
        [text_marker(1)],
    )
    with pytest.raises(ValueError, match="not in the SQL"):
        bad.rows("b0")
    unsliced = Compiled(lambda b: _seats(b, "finished"), [marker(1)], sliced=True)
    with pytest.raises(ValueError, match="LIMIT"):
        unsliced.rows(1, limit=1)


def test_the_pages_compiled_reads_answer_as_their_querysets(make_user: Any, make_bot: Any) -> None:
    world = grow(make_user, make_bot, owners=2, bots_each=3, rounds=4)
    for bot in world["bots"]:
        seats = MatchSeat.objects.filter(bot_id=bot.pk)
        assert bot_match_selectors.bot_match_count(bot_id=bot.pk) == seats.count()
        lines = bot_match_selectors.BotMatchLines(bot.pk)
        assert [m.pk for m in lines[0:3]] == list(
            seats.order_by("-match_id").values_list("match_id", flat=True)[:3]
        )
        history = rating_selectors.bot_rating_history_rows(bot_id=bot.pk, season=1)
        assert [r[0] for r in history] == list(
            rating_selectors.bot_rating_history(bot_id=bot.pk, season=1).values_list(
                "match_id", flat=True
            )
        )
    assert bot_match_selectors.bot_match_count(bot_id=10**9) == 0
    finished = match_selectors.match_lines(status=Match.Status.FINISHED)
    assert [m.pk for m in finished[0:4]] == list(
        Match.objects.filter(status="finished").order_by("-id").values_list("pk", flat=True)[:4]
    )
    queued = match_selectors.match_lines(status=Match.Status.QUEUED, oldest_first=True)
    assert [m.pk for m in queued[0:5]] == list(
        Match.objects.filter(status="queued").order_by("id").values_list("pk", flat=True)[:5]
    )
    cup = match_selectors.match_lines(tournament_id=world["cup"].pk, ladder="dd-1")
    assert [m.pk for m in cup[1:3]] == list(
        Match.objects.filter(tournament=world["cup"], ladder="dd-1")
        .order_by("-id")
        .values_list("pk", flat=True)[1:3]
    )
    assert rating_selectors.leaderboard_size() == len(
        rating_selectors.leaderboard_search(include_inactive=True)
    )


def test_seats_as_rows_are_shown_as_the_prefetched_seats(make_user: Any, make_bot: Any) -> None:
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    from digdown.v1 import ladder_pb2
    from ladder.grpc.messages import match_pb
    from ladder.matches.apis import MatchOutputSerializer

    world = grow(make_user, make_bot, owners=2, bots_each=3, rounds=4)
    request = Request(APIRequestFactory().get("/api/v1/matches/"))
    for bot in (None, world["bots"][0].pk):
        prefetched = list(match_selectors.match_list(bot_id=bot))
        rows = match_selectors.with_seat_rows(
            list(match_selectors.match_list(bot_id=bot, seats=False))
        )
        assert len(rows) == len(prefetched) >= 3
        context = {"request": request}
        assert MatchOutputSerializer(rows, many=True, context=context).data == (
            MatchOutputSerializer(prefetched, many=True, context=context).data
        )
        assert [match_pb(m) for m in rows] == [match_pb(m) for m in prefetched]
        assert all(isinstance(match_pb(m), ladder_pb2.Match) for m in rows)
    assert match_selectors.with_seat_rows([]) == []
