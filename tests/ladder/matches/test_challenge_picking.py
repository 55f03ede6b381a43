"""A challenge may leave its opponents to the ladder, on REST as on gRPC, by one service
(``ladder.matches.challenges.challenge_create``): the same bots picked (the nearest in
rating that can play now: a connected bot only while connected) and the same refusals.
Before, only gRPC ``RequestChallenge`` could pick (its servicer held the rule) and REST
answered 400 to a challenge naming one bot."""

from __future__ import annotations

import time
from typing import Any

import grpc
import pytest
from rest_framework.test import APIClient

from digdown.v1 import ladder_pb2 as pb
from tests.ladder.grpc.conftest import bearer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]
T = 10.0


@pytest.fixture(autouse=True)
def _database_presence(settings: Any) -> None:
    settings.LADDER_PRESENCE_URL = ""  # presence rows in the test's database


class World:
    """``me`` (owner's) among bots at known distances in rating on the default ladder;
    ``plug`` is a connected bot, the nearest of all, offline until ``online``."""

    def __init__(self, make_user: Any, make_bot: Any, token_for: Any) -> None:
        from ladder.bots.connected_versions import connected_version_for_label
        from ladder.bots.services import bot_create
        from ladder.ratings.models import BotRating

        self.owner, rival = make_user("owner"), make_user("rival")
        self.token = token_for(self.owner)
        self.me = make_bot(self.owner, "me-bot")
        self.rival_bot = make_bot(rival, "rival-0")
        others = {"near-a": 10, "near-b": -20, "far-c": 300, "far-d": -400}
        self.bots = {name: make_bot(rival, name) for name in others}
        self.plug = bot_create(owner=rival, name="plug", kind="connected")
        connected_version_for_label(bot_id=self.plug.pk, label="v1")
        start = BotRating.objects.get(bot=self.me, ladder="dd-1").rating
        for name, delta in {**others, "plug": 1, "rival-0": 900}.items():
            BotRating.objects.filter(bot__name=name, ladder="dd-1").update(rating=start + delta)
        self.api = APIClient()
        self.api.credentials(HTTP_AUTHORIZATION=f"Bearer {self.token}")

    def online(self) -> None:
        """A live presence row, as a grpcserver holding a stream of the plug writes it."""
        from ladder.bots import presence

        plug = self.plug
        record = presence.StreamRecord(
            "s" + str(plug.pk), plug.pk, plug.owner_id, 1, "relay:1", time.time()
        )
        assert presence.admit(record, per_bot=4, per_user=16) is None

    def by_rest(self, body: dict[str, Any]) -> tuple[int, Any]:
        r = self.api.post("/api/v1/matches/", body, format="json")
        return r.status_code, r.json()

    def picked_by_rest(self, seats: int) -> list[str]:
        code, body = self.by_rest({"bots": [self.me.pk], "seats": seats})
        assert code == 201, body
        assert body["seats"][0]["bot_name"] == "me-bot" and len(body["seats"]) == seats
        return sorted(s["bot_name"] for s in body["seats"][1:])

    def picked_by_grpc(self, stub_inproc: Any, seats: int) -> list[str]:
        match = stub_inproc.RequestChallenge(
            pb.RequestChallengeRequest(bot="me-bot", num_seats=seats),
            metadata=bearer(self.token),
            timeout=T,
        ).match
        assert match.seats[0].bot == "me-bot" and len(match.seats) == seats
        return sorted(s.bot for s in match.seats[1:])


@pytest.fixture
def world(make_user: Any, make_bot: Any, token_for: Any) -> World:
    return World(make_user, make_bot, token_for)


def test_rest_and_grpc_pick_the_same_opponents(stub_inproc: Any, world: World) -> None:
    # The plug is the nearest, but offline: both skip it.
    assert world.picked_by_rest(3) == world.picked_by_grpc(stub_inproc, 3) == ["near-a", "near-b"]
    # Two seats by default, on both.
    code, body = world.by_rest({"bots": [world.me.pk]})
    assert code == 201 and [s["bot_name"] for s in body["seats"]] == ["me-bot", "near-a"], body
    world.online()
    assert world.picked_by_rest(3) == world.picked_by_grpc(stub_inproc, 3) == ["near-a", "plug"]
    everyone = ["near-a", "near-b", "plug"]
    assert world.picked_by_rest(4) == world.picked_by_grpc(stub_inproc, 4) == everyone


def test_rest_and_grpc_refuse_the_same_challenges(stub_inproc: Any, world: World) -> None:
    from ladder.matches.models import Match

    me, rival = world.me, world.rival_bot
    cases = [
        # (REST body, gRPC request, HTTP status, gRPC code, text in both)
        ({"bots": [me.pk], "seats": 5}, pb.RequestChallengeRequest(bot="me-bot", num_seats=5),
         400, grpc.StatusCode.INVALID_ARGUMENT, "4"),
        ({"bots": [me.pk, rival.pk], "seats": 3},
         pb.RequestChallengeRequest(bot="me-bot", opponents=["rival-0"], num_seats=3),
         400, grpc.StatusCode.INVALID_ARGUMENT, "does not match"),
        ({"bots": [rival.pk]}, pb.RequestChallengeRequest(bot="rival-0"),
         403, grpc.StatusCode.PERMISSION_DENIED, "belongs to another user"),
    ]  # fmt: skip
    for body, request, status, code, text in cases:
        got, answer = world.by_rest(body)
        assert got == status and text in str(answer), (body, got, answer)
        with pytest.raises(grpc.RpcError) as err:
            stub_inproc.RequestChallenge(request, metadata=bearer(world.token), timeout=T)
        assert err.value.code() == code and text in (err.value.details() or ""), err.value
    # Too few bots that can play: three of the six others are made inactive, the plug is offline.
    got, answer = world.by_rest({"bots": [me.pk], "seats": 4})
    assert got == 201, answer
    from ladder.bots.models import Bot

    Bot.objects.filter(name__in=["far-c", "far-d", "rival-0"]).update(is_active=False)
    got, answer = world.by_rest({"bots": [me.pk], "seats": 4})
    assert got == 409 and "only 2 other playable bots near me-bot" in answer["detail"], answer
    with pytest.raises(grpc.RpcError) as err:
        stub_inproc.RequestChallenge(
            pb.RequestChallengeRequest(bot="me-bot", num_seats=4),
            metadata=bearer(world.token),
            timeout=T,
        )
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "only 2 other playable bots near me-bot" in (err.value.details() or "")
    assert Match.objects.filter(requested_by=world.owner).count() == 1
