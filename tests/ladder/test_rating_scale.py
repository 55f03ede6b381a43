"""The house bots on the product's default rating system: an Elo-scale board that settles.

Before: on the default system (Plackett-Luce) every bot stayed "prov." for ever,
the board showed numbers like 2,790 ± 520 and a rank column below zero. Here the
three house bots (random, heuristic, starter) play real games (the rules engine,
in this process) for about 40 games each and the results are recorded through the
recording service; then no bot is provisional and no rating figure is negative on
the web board, in the REST answers or in the gRPC answers (a real server on
loopback).

The suite pins ``LADDER_RATING_SYSTEM=elo`` (tests/conftest.py), so this test
configures the default system itself.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.management import call_command
from google.protobuf.json_format import MessageToDict
from rest_framework.test import APIClient

from digdown.v1 import ladder_pb2 as pb
from ladder.matches.creation import match_create
from ladder.matches.recording import match_record_result
from ladder.ratings.models import BotRating
from tests.ladder.conftest import make_replay
from tests.support.house_games import HOUSE, house_game, house_schedule

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]

DEFAULT_SYSTEM = "plackett-luce"
"""``LADDER_RATING_SYSTEM``'s default in ladder/settings.py (the environment pins elo here)."""
GAMES_EACH = 40
T = 10.0
SIGNED = {"change", "delta", "rating_change", "vs_previous"}
"""Fields that are differences, rightly negative (a lost match moves a rating down)."""


def negatives(data: Any, path: str = "") -> list[str]:
    """Every negative number in a JSON-like answer (outside the signed differences)."""
    found: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            if key not in SIGNED:
                found += negatives(value, f"{path}.{key}")
    elif isinstance(data, list):
        for i, value in enumerate(data):
            found += negatives(value, f"{path}[{i}]")
    elif isinstance(data, int | float) and not isinstance(data, bool) and data < 0:
        found.append(f"{path} = {data}")
    return found


def test_house_bots_settle_on_an_elo_scale_board_with_no_negative_figure(
    settings: Any, make_user: Any, make_bot: Any, stub_inproc: Any
) -> None:
    from ladder.accounts.services import token_create

    settings.LADDER_RATING_SYSTEM = DEFAULT_SYSTEM
    settings.LADDER_LADDERS = {
        "dd-1": {
            "ruleset": "dd-1", "difficulty": "normal", "seats": (2, 4), "system": DEFAULT_SYSTEM,
        }
    }  # fmt: skip
    owner = make_user("house")
    token = token_create(user=owner).secret
    bots = {name: make_bot(owner, name) for name in HOUSE}
    schedule = house_schedule(GAMES_EACH)
    for n, names in enumerate(schedule):
        match = match_create(bot_ids=[bots[name].pk for name in names], requested_by=owner)
        outcome = match_record_result(
            match_id=match.pk, result=house_game(names, seed=n + 1), replay_bytes=make_replay(n)
        )
        assert outcome.recorded

    entries = {e.bot.name: e for e in BotRating.objects.select_related("bot")}
    assert {e.games for e in entries.values()} <= set(range(GAMES_EACH, GAMES_EACH + 4))
    by_rating = sorted(entries, key=lambda name: -entries[name].rating)
    assert by_rating[0] == "heuristic" and by_rating[-1] == "random", by_rating

    api = APIClient()
    # REST: the board, each bot, its history and lineage.
    board = api.get("/api/v1/leaderboard/?ladder=dd-1").json()
    rows = board["results"]
    assert len(rows) == 3
    assert [r["name"] for r in rows if r["provisional"]] == [], rows
    assert negatives(board) == []
    # The Elo scale: around the start of 1500, the house heuristic far above random
    # (it almost always finishes ahead of it) but not thousands of points away.
    ratings = {r["name"]: r["rating"] for r in rows}
    assert 1300 < sum(ratings.values()) / 3 < 1700, ratings
    assert 400 < ratings["heuristic"] - ratings["random"] < 1600, ratings
    for r in rows:
        assert r["score"] == pytest.approx(max(0.0, r["rating"] - 3 * r["sigma"]), abs=0.02)
    for bot in bots.values():
        for url in (
            f"/api/v1/bots/{bot.pk}/?ladder=dd-1",
            f"/api/v1/bots/{bot.pk}/rating-history/?ladder=dd-1",
            f"/api/v1/bots/{bot.pk}/lineage/?ladder=dd-1",
        ):
            answer = api.get(url)
            assert answer.status_code == 200, (url, answer.content)
            assert negatives(answer.json()) == [], url

    # gRPC: the board, the owner's bots, each bot's matches (ratings around each match).
    grpc_board = stub_inproc.Leaderboard(pb.LeaderboardRequest(ladder="dd-1"), timeout=T)
    assert len(grpc_board.entries) == 3
    assert [e.bot for e in grpc_board.entries if e.provisional] == []
    assert negatives(MessageToDict(grpc_board)) == []
    for e in grpc_board.entries:
        assert e.rating > 0 and e.sigma > 0 and e.interval_low > 0 and e.rank_rating >= 0
    auth = [("authorization", f"Bearer {token}")]
    mine = stub_inproc.ListMyBots(pb.ListMyBotsRequest(ladder="dd-1"), metadata=auth, timeout=T)
    assert negatives(MessageToDict(mine)) == [] and len(mine.bots) == 3
    for name in HOUSE:
        matches = stub_inproc.ListMatches(pb.ListMatchesRequest(bot=name, page_size=100), timeout=T)
        assert matches.matches
        assert negatives(MessageToDict(matches)) == [], name

    # The web board: the system named, the numbers explained, no mark, nothing negative.
    html = api.get("/?ladder=dd-1").content.decode()
    assert 'data-system="plackett-luce"' in html and "on the Elo scale" in html
    assert "starts at 1500" in html and 'id="rank-rating-note"' in html
    table = html[html.index('id="leaderboard"') :]
    table = table[: table.index("</table>")]
    assert "badge provisional" not in table
    assert not re.search(r">\s*[-\u2212]\s*\d", table), "a negative figure on the board"
    for bot in bots.values():
        page = api.get(f"/bots/{bot.pk}/").content.decode()
        assert "badge provisional" not in page

    # The history replays exactly under the calibrated system, and `rerate --system`
    # converts the ladder both ways: to Elo (zero-sum: the three sum to 3 x 1500), and
    # back to the very figures recorded.
    call_command("rerate", "--check")
    recorded = sorted(BotRating.objects.values_list("bot_id", "rating", "sigma", "score"))
    call_command("rerate", "--ladder", "dd-1", "--system", "elo")
    elo_board = api.get("/api/v1/leaderboard/?ladder=dd-1").json()["results"]
    assert sum(r["rating"] for r in elo_board) == pytest.approx(4500)
    assert not any(r["provisional"] for r in elo_board) and negatives(elo_board) == []
    call_command("rerate", "--ladder", "dd-1", "--system", DEFAULT_SYSTEM)
    assert sorted(BotRating.objects.values_list("bot_id", "rating", "sigma", "score")) == recorded
