"""Nobody can make an absent connected bot forfeit: every way of asking for a match that
seats a connected bot with no open Play stream is refused (REST 409, gRPC
FAILED_PRECONDITION through the same service, comparisons, the owner's page), and the
matchmaker offers it only while connected. Before, three REST challenges took a victim
from 1500 to 1126 and suspended it."""

from __future__ import annotations

import time
from typing import Any

import pytest
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _database_presence(settings: Any) -> None:
    settings.LADDER_PRESENCE_URL = ""  # presence rows in the test's database


def _connected(owner: Any, name: str) -> Any:
    from ladder.bots.services import bot_create

    return bot_create(owner=owner, name=name, kind="connected")


def _online(bot: Any) -> None:
    """A live presence row, as a grpcserver holding a stream of the bot writes it."""
    from ladder.bots import presence

    record = presence.StreamRecord(
        "s" + str(bot.pk), bot.pk, bot.owner_id, 1, "relay:1", time.time()
    )
    assert presence.admit(record, per_bot=4, per_user=16) is None


def test_three_rest_challenges_of_an_absent_connected_bot_are_refused(
    make_user: Any, make_bot: Any, token_for: Any
) -> None:
    from ladder.bots.models import Bot
    from ladder.matches.models import Match
    from ladder.ratings.models import BotRating

    attacker, victim_owner = make_user("mallory"), make_user("victor")
    mine = make_bot(attacker, "mal-bot")
    victim = _connected(victim_owner, "vic-plug")
    ratings_before = list(
        BotRating.objects.filter(bot=victim).values_list("rating", "sigma", "games")
    )
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(attacker)}")
    for _ in range(3):
        r = api.post("/api/v1/matches/", {"bots": [mine.pk, victim.pk]}, format="json")
        assert r.status_code == 409, r.content
        assert "vic-plug hold no open Play stream" in r.json()["detail"]
    assert not Match.objects.filter(seats__bot=victim).exists()
    assert (
        list(BotRating.objects.filter(bot=victim).values_list("rating", "sigma", "games"))
        == ratings_before
    )
    assert Bot.objects.get(pk=victim.pk).playable

    _online(victim)  # connected: the same challenge is queued
    r = api.post("/api/v1/matches/", {"bots": [mine.pk, victim.pk]}, format="json")
    assert r.status_code == 201, r.content


def test_a_comparison_against_an_absent_connected_opponent_is_refused(
    make_user: Any, make_bot: Any
) -> None:
    from ladder.bots.services import bot_version_smoke_record, bot_version_upload
    from ladder.common.exceptions import Conflict
    from ladder.tournaments.services import comparison_create

    owner, other = make_user("cora"), make_user("otto")
    bot = make_bot(owner, "cora-bot")
    v2 = bot_version_upload(
        user=owner, bot_id=bot.pk, filename="bot.py", data=b"def act(o):\n    return 0\n"
    )
    bot_version_smoke_record(version_id=v2.pk, passed=True, outcome="passed", log=b"")
    plug = _connected(other, "otto-plug")
    with pytest.raises(Conflict, match="otto-plug hold no open Play stream"):
        comparison_create(
            user=owner, bot_id=bot.pk, old_version=1, new_version=2, opponent_ids=[plug.pk], deals=2
        )
