"""Suspensions over the Ladder gRPC service: the owner sees why, and lifts an automatic one."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from digdown.v1 import ladder_pb2 as pb
from tests.ladder.grpc.conftest import bearer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]
T = 10.0


def test_owner_sees_and_lifts_an_auto_suspension_not_a_staff_one(
    stub: Any, user_token: Any
) -> None:
    from ladder.bots.services import bot_auto_suspend, bot_suspend

    _, tok = user_token("sus-owner")
    staff, _ = user_token("sus-staff", staff=True)
    _, other_tok = user_token("sus-other")
    md = bearer(tok)
    created = stub.CreateBot(pb.CreateBotRequest(name="sus-bot", kind="HOSTED"), metadata=md)
    assert (created.bot.active, created.bot.suspension, created.bot.suspended_reason) == (
        True, "", ""
    )  # fmt: skip
    bot_auto_suspend(bot_id=created.bot.id, reason="forfeited its last 3 matches (last: dead)")
    [mine] = stub.ListMyBots(pb.ListMyBotsRequest(), metadata=md, timeout=T).bots
    assert not mine.active and mine.suspension == "AUTO"
    assert mine.suspended_reason == (
        "automatically suspended: forfeited its last 3 matches (last: dead)"
    )
    with pytest.raises(grpc.RpcError) as info:  # someone else's bot
        stub.ReactivateBot(pb.ReactivateBotRequest(bot="sus-bot"), metadata=bearer(other_tok))
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    lifted = stub.ReactivateBot(pb.ReactivateBotRequest(bot="sus-bot"), metadata=md, timeout=T)
    assert (lifted.bot.active, lifted.bot.suspension, lifted.bot.suspended_reason) == (
        True, "", ""
    )  # fmt: skip
    bot_suspend(user=staff, bot_id=created.bot.id, reason="collusion")
    with pytest.raises(grpc.RpcError) as info:
        stub.ReactivateBot(pb.ReactivateBotRequest(bot="sus-bot"), metadata=md, timeout=T)
    assert info.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "only staff can lift it" in (info.value.details() or "")
    [mine] = stub.ListMyBots(pb.ListMyBotsRequest(), metadata=md, timeout=T).bots
    assert (mine.active, mine.suspension, mine.suspended_reason) == (False, "STAFF", "collusion")
    with pytest.raises(grpc.RpcError) as info:
        stub.ReactivateBot(pb.ReactivateBotRequest(bot="no-such-bot"), metadata=md, timeout=T)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
