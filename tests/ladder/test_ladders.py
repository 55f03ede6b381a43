"""Ratings per ladder: configuration, a second ladder (dd-2), the default as one setting."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from ladder.common.exceptions import ApplicationError, Conflict, NotFound
from ladder.ladders import ladder_for, ladder_get, ladder_list, ladders
from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.ratings.models import BotRating
from tests.ladder.conftest import record, standing

pytestmark = pytest.mark.django_db

DD1 = {"ruleset": "dd-1", "difficulty": "normal", "seats": (2, 4)}
DD2 = {"ruleset": "dd-2", "difficulty": "normal", "seats": (2, 4)}


@pytest.fixture
def two_ladders(settings: Any) -> Any:
    settings.LADDER_LADDERS = {"dd-1": DD1, "dd-2": DD2}
    return settings


@pytest.mark.parametrize(
    "configured, default, message",
    [
        ({"dd-1": {**DD1, "difficulty": "brutal"}}, "dd-1", "difficulty"),
        ({"dd-1": {**DD1, "seats": (1, 4)}}, "dd-1", "seats"),
        ({"dd-1": {**DD1, "seats": (3, 2)}}, "dd-1", "seats"),
        ({"Bad Key": DD1}, "Bad Key", "must match"),
        ({"dd-1": {"ruleset": "dd-1"}}, "dd-1", "needs ruleset"),
        ({"dd-1": DD1}, "dd-2", "not in LADDER_LADDERS"),
        ({"dd-1": DD1, "duel": {**DD1, "seats": (2, 2)}}, "dd-1", "overlap"),
    ],
)
def test_misconfigured_ladders_are_refused(
    settings: Any, configured: Any, default: str, message: str
) -> None:
    settings.LADDER_LADDERS, settings.LADDER_DEFAULT_LADDER = configured, default
    with pytest.raises(ImproperlyConfigured, match=message):
        ladders()


def test_a_duel_ladder_and_a_multiplayer_ladder_may_share_a_game(settings: Any) -> None:
    settings.LADDER_LADDERS = {
        "duel": {**DD1, "seats": (2, 2)},
        "dd-1": {**DD1, "seats": (3, 4)},
    }
    assert ladder_for(ruleset="dd-1", difficulty="normal", seats=2).key == "duel"
    assert ladder_for(ruleset="dd-1", difficulty="normal", seats=4).key == "dd-1"
    assert ladder_for(ruleset="dd-1", difficulty="hard", seats=2) is None


def test_default_ladder_is_dd1_normal_and_every_bot_has_an_entry(
    make_user: Any, make_bot: Any
) -> None:
    assert [(lad.key, lad.ruleset, lad.difficulty, lad.is_default) for lad in ladder_list()] == [
        ("dd-1", "dd-1", "normal", True)
    ]
    bot = make_bot(make_user("alice"), "first")
    assert standing(bot) == (150000, 0, 0)
    assert APIClient().get("/api/v1/ladders/").json() == [
        {
            "key": "dd-1",
            "ruleset": "dd-1",
            "difficulty": "normal",
            "min_seats": 2,
            "max_seats": 4,
            "is_default": True,
        }
    ]


def test_a_second_ladder_has_its_own_ratings(
    two_ladders: Any, make_user: Any, make_bot: Any
) -> None:
    alice = make_user("alice")
    a, b = make_bot(alice, "alpha"), make_bot(alice, "bravo")
    assert sorted(BotRating.objects.filter(bot=a).values_list("ladder", flat=True)) == [
        "dd-1",
        "dd-2",
    ]
    on_dd2 = match_create(bot_ids=[a.pk, b.pk], ladder="dd-2", requested_by=alice)
    assert (on_dd2.ladder, on_dd2.ruleset, on_dd2.difficulty) == ("dd-2", "dd-2", "normal")
    record(on_dd2, [1, 2])
    won = standing(a, "dd-2")
    assert won[0] > 150000 and won[1:] == (1, 1)
    assert standing(a, "dd-1") == (150000, 0, 0)  # the default ladder did not move

    client = APIClient()
    board = {r["name"]: r for r in client.get("/api/v1/leaderboard/?ladder=dd-2").json()["results"]}
    assert board["alpha"]["rating"] == won[0] / 100 and board["alpha"]["ladder"] == "dd-2"
    assert board["alpha"]["wins"] == 1 and board["bravo"]["games"] == 1
    default = client.get("/api/v1/leaderboard/").json()["results"]
    assert {r["rating"] for r in default} == {1500.0} and default[0]["ladder"] == "dd-1"
    detail = client.get(f"/api/v1/bots/{a.pk}/?ladder=dd-2").json()
    assert detail["rating"] == won[0] / 100
    assert [r["ladder"] for r in detail["ratings"]] == ["dd-1", "dd-2"]
    history = client.get(f"/api/v1/bots/{a.pk}/rating-history/?ladder=dd-2").json()
    assert [h["match"] for h in history] == [on_dd2.pk]
    assert client.get(f"/api/v1/bots/{a.pk}/rating-history/").json() == []
    listed = client.get("/api/v1/matches/?ladder=dd-2").json()["results"]
    assert [(m["id"], m["ladder"]) for m in listed] == [(on_dd2.pk, "dd-2")]

    # Switching the default ladder is one setting.
    two_ladders.LADDER_DEFAULT_LADDER = "dd-2"
    assert ladder_get().key == "dd-2"
    top = client.get("/api/v1/leaderboard/").json()["results"][0]
    assert (top["name"], top["ladder"]) == ("alpha", "dd-2")
    assert match_create(bot_ids=[a.pk, b.pk], requested_by=alice).ladder == "dd-2"
    call_command("rerate", "--check")


def test_a_ladder_configured_later_is_opened_by_rerate(
    settings: Any, make_user: Any, make_bot: Any, capsys: Any
) -> None:
    alice = make_user("alice")
    a, b = make_bot(alice, "alpha"), make_bot(alice, "bravo")
    record(match_create(bot_ids=[a.pk, b.pk], requested_by=alice), [1, 2])
    settings.LADDER_LADDERS = {"dd-1": DD1, "dd-2": DD2}
    assert APIClient().get("/api/v1/leaderboard/?ladder=dd-2").json()["count"] == 0
    call_command("rerate", "--ladder", "dd-2")
    assert "dd-2: 0 results replayed, 0 bots rated, 0 mismatches fixed" in capsys.readouterr().out
    assert standing(a, "dd-2") == standing(b, "dd-2") == (150000, 0, 0)
    assert APIClient().get("/api/v1/leaderboard/?ladder=dd-2").json()["count"] == 2
    # A match on the new ladder records even for a bot without an entry yet.
    c = make_bot(alice, "charlie")
    BotRating.objects.filter(bot=c, ladder="dd-2").delete()
    record(match_create(bot_ids=[c.pk, a.pk], ladder="dd-2", requested_by=alice), [1, 2])
    assert standing(c, "dd-2")[1:] == (1, 1)
    call_command("rerate", "--check")
    assert "0 mismatches found" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no ladder 'dd-9'"):
        call_command("rerate", "--ladder", "dd-9")


def test_which_ladder_a_match_is_played_on(settings: Any, make_user: Any, make_bot: Any) -> None:
    alice = make_user("alice")
    a, b = make_bot(alice, "alpha"), make_bot(alice, "bravo")
    ids = [a.pk, b.pk]
    with pytest.raises(Conflict, match="no ladder rates dd-1 at hard with 2 seats"):
        match_create(bot_ids=ids, difficulty="hard", requested_by=alice)
    off = match_create(bot_ids=ids, difficulty="hard", rated=False, requested_by=alice)
    assert (off.ladder, off.difficulty, off.rated) == ("", "hard", False)
    record(off, [1, 2])
    seat = off.seats.get(bot=a)
    assert (seat.rating_before, seat.rating_after) == (None, None)
    assert standing(a) == (150000, 0, 0)
    with pytest.raises(ApplicationError, match="plays normal, not hard"):
        match_create(bot_ids=ids, ladder="dd-1", difficulty="hard", requested_by=alice)
    with pytest.raises(NotFound, match="no ladder 'nope'; ladders: dd-1"):
        match_create(bot_ids=ids, ladder="nope", requested_by=alice)
    settings.LADDER_LADDERS = {
        "dd-1": DD1,
        "duel-hard": {**DD1, "difficulty": "hard", "seats": (2, 2)},
    }
    hard = match_create(bot_ids=ids, difficulty="hard", requested_by=alice)
    assert (hard.ladder, hard.difficulty, hard.rated) == ("duel-hard", "hard", True)
    c = make_bot(alice, "charlie")
    with pytest.raises(ApplicationError, match="plays 2 to 2 seats, not 3"):
        match_create(bot_ids=[*ids, c.pk], ladder="duel-hard", requested_by=alice)
    assert Match.objects.filter(ladder="duel-hard").count() == 1


def test_rest_ladder_parameters(make_user: Any, make_bot: Any, token_for: Any) -> None:
    alice = make_user("alice")
    a, b = make_bot(alice, "alpha"), make_bot(alice, "bravo")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(alice)}")
    r = client.get("/api/v1/leaderboard/?ladder=nope")
    assert r.status_code == 404 and "ladders: dd-1" in r.json()["detail"]
    r = client.post("/api/v1/matches/", {"bots": [a.pk, b.pk], "difficulty": "hard"}, format="json")
    assert r.status_code == 409 and "unrated" in r.json()["detail"]
    r = client.post(
        "/api/v1/matches/",
        {"bots": [a.pk, b.pk], "difficulty": "hard", "rated": False},
        format="json",
    )
    assert r.status_code == 201 and (r.json()["ladder"], r.json()["rated"]) == ("", False)
    r = client.post("/api/v1/matches/", {"bots": [a.pk, b.pk], "ladder": "dd-1"}, format="json")
    assert r.status_code == 201 and r.json()["ladder"] == "dd-1" and r.json()["seed"] is None
    r = client.post("/api/v1/matches/", {"bots": [a.pk, 2**64]}, format="json")
    assert r.status_code == 400 and "bots" in r.json()["fields"]
