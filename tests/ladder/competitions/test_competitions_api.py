"""Competitions over REST: create (staff), enter, read the phases, entries and result;
private tournaments; errors are 4xx with a message; every route is in the schema."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from ladder.competitions.models import Competition
from ladder.competitions.services import competitions_tick, final_advance
from tests.ladder.competitions.test_competitions import _play_open

pytestmark = pytest.mark.django_db


def _auth(api: Any, token: str) -> Any:
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return api


def _body(**extra: Any) -> dict[str, Any]:
    now = timezone.now()
    return {
        "name": "spring cup",
        "rules": "Bots of dd-1, two seats.",
        "ladder": "dd-1",
        "format": "double_elimination",
        "entry_opens_at": (now - timedelta(seconds=5)).isoformat(),
        "freeze_at": (now + timedelta(seconds=60)).isoformat(),
        "final_starts_at": (now + timedelta(seconds=90)).isoformat(),
        "final_size": 4,
        "min_deals": 1,
        "matchup_max_deals": 2,
        **extra,
    }


def test_rest_walks_a_competition(api: Any, make_user: Any, make_bot: Any, token_for: Any) -> None:
    staff = make_user("boss", staff=True)
    alice, bob = make_user("alice"), make_user("bob")
    a, b = make_bot(alice, "alice-bot"), make_bot(bob, "bob-bot")
    r = _auth(api, token_for(alice)).post("/api/v1/competitions/", _body(), format="json")
    assert r.status_code == 403 and "staff" in r.json()["detail"]
    r = _auth(api, token_for(staff)).post("/api/v1/competitions/", _body(seats=3), format="json")
    assert r.status_code == 400 and "2 seats" in r.json()["detail"]
    r = api.post("/api/v1/competitions/", _body(), format="json")
    assert r.status_code == 201, r.json()
    c = r.json()
    assert c["phase"] == "entry" and [p["phase"] for p in c["phases"]] == [
        "entry",
        "frozen",
        "final",
        "finished",
    ]
    url = f"/api/v1/competitions/{c['id']}/"
    for user, bot in ((alice, a), (bob, b)):
        r = _auth(api, token_for(user)).post(url + "entries/", {"bot": bot.pk}, format="json")
        assert r.status_code == 201, r.json()
    r = api.post(url + "entries/", {"bot": b.pk}, format="json")
    assert r.status_code == 409  # already entered
    api.credentials()
    r = api.get(url + "entries/")
    assert r.json()["count"] == 2
    at = timezone.now()
    competitions_tick(at + timedelta(seconds=61))
    competitions_tick(at + timedelta(seconds=91))
    competition = Competition.objects.get(pk=c["id"])
    strength = {a.pk: 1, b.pk: 2}
    for _ in range(20):
        if not _play_open(competition, strength):
            break
        final_advance(competition_id=competition.pk)
    r = api.get(url)
    body = r.json()
    assert body["phase"] == "finished", body
    assert body["result"]["places"][0]["bot_name"] == "bob-bot"
    assert body["result"]["places"][0]["low"] == 1
    assert body["final"][0]["kind"] == "double_elimination"
    entries = api.get(url + "entries/").json()["results"]
    assert [e["bot_name"] for e in entries] == ["bob-bot", "alice-bot"]
    assert entries[0]["version"] == 1 and entries[0]["place"] == 1
    assert api.get("/api/v1/competitions/").json()["count"] == 1
    assert api.get("/api/v1/competitions/999999/").status_code == 404


def test_rest_private_tournament(api: Any, make_user: Any, make_bot: Any, token_for: Any) -> None:
    carol, dave = make_user("carol"), make_user("dave")
    mine = [make_bot(carol, "c-1"), make_bot(carol, "c-2")]
    theirs = make_bot(dave, "d-1")
    _auth(api, token_for(carol))
    r = api.post(
        "/api/v1/private-tournaments/",
        {
            "name": "ours",
            "bots": [m.pk for m in mine],
            "format": "round_robin",
            "ladder": "dd-1",
            "min_deals": 1,
            "max_games": 12,
            "top": 2,
        },
        format="json",
    )
    assert r.status_code == 201, r.json()
    tid = r.json()["id"]
    r = api.post(f"/api/v1/competitions/{tid}/invitations/", {"bot": theirs.pk}, format="json")
    assert r.status_code == 201
    invitation = r.json()["id"]
    _auth(api, token_for(dave))
    r = api.post(f"/api/v1/competitions/{tid}/start/")
    assert r.status_code == 403  # only its creator starts it
    r = api.post(f"/api/v1/competition-invitations/{invitation}/accept/")
    assert r.status_code == 201
    assert api.get("/api/v1/competitions/?private=1").json()["count"] == 1
    _auth(api, token_for(carol))
    r = api.post(f"/api/v1/competitions/{tid}/start/")
    assert r.status_code == 200 and r.json()["phase"] == "final"
    assert r.json()["entry_count"] == 3


def test_competition_routes_are_in_the_schema(api: Any) -> None:
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    for route in (
        "/api/v1/competitions/",
        "/api/v1/competitions/{competition_id}/",
        "/api/v1/competitions/{competition_id}/entries/",
        "/api/v1/private-tournaments/",
        "/api/v1/competition-invitations/{invitation_id}/accept/",
    ):
        assert route in schema["paths"], route
