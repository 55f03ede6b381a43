"""Where the ladder tells authors: a bot suspended (by the ladder, with the failing match's
logs linked, or by staff), a smoke match judged, a connected bot's stream refused."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest
from django.test import TestCase

from digdown.v1 import ladder_pb2 as pb
from ladder.accounts.models import User
from ladder.bots.models import Bot
from ladder.bots.services import (
    bot_create,
    bot_suspend,
    bot_version_smoke_record,
    bot_version_upload,
)
from ladder.finishing.services import match_finish
from ladder.grpc.auth import GrpcError
from ladder.grpc.play import PlayHub
from ladder.matches.creation import match_create
from ladder.notifications.kinds import Channel, Kind
from ladder.notifications.models import Delivery
from tests.ladder.conftest import make_replay, make_result


def author(make_user: Any, name: str) -> User:
    user = make_user(name)
    user.email = f"{name}@example.org"
    user.save(update_fields=["email"])
    return user


def owed(user: User, kind: str) -> list[Delivery]:
    return list(Delivery.objects.filter(user=user, kind=kind, channel=Channel.EMAIL))


def _forfeit(match: Any, bot: Bot) -> None:
    """Record ``match`` with ``bot`` forfeiting (as the auto-suspend tests do)."""
    seats = list(match.seats.order_by("seat"))
    ranks = [2 if s.bot_id == bot.pk else 1 for s in seats]
    result = make_result(ranks)
    for seat, info in zip(seats, result["seats"], strict=True):
        if seat.bot_id == bot.pk:
            info.update(ended="forfeited", faults=3, reason="unreachable: connection refused")
    with TestCase.captureOnCommitCallbacks(execute=True):  # the suspension runs on commit
        match_finish(match_id=match.pk, result=result, replay_bytes=make_replay(match.pk))


def test_a_bot_the_ladder_suspends_is_told_with_the_failing_matchs_logs(
    make_user: Any, make_bot: Any, settings: Any
) -> None:
    settings.LADDER_SITE_URL = "https://ladder.test"
    settings.LADDER_SUSPEND_WINDOW = 10
    settings.LADDER_SUSPEND_CONSECUTIVE = 3
    bad = make_bot(author(make_user, "bad"), "bad-bot")
    good = make_bot(author(make_user, "good"), "good-bot")
    matches = [match_create(bot_ids=[bad.pk, good.pk]) for _ in range(3)]
    for match in matches[:2]:
        _forfeit(match, bad)
    assert owed(bad.owner, Kind.BOT_SUSPENDED) == []
    _forfeit(matches[2], bad)
    [told] = owed(bad.owner, Kind.BOT_SUSPENDED)
    assert told.link == f"https://ladder.test/matches/{matches[2].pk}/#seat-logs"
    assert told.subject == "Your bot bad-bot was suspended"
    assert "forfeited its last 3" in told.body and "unreachable: connection refused" in told.body
    assert told.data["match"] == matches[2].pk and told.data["by"] == "ladder"
    assert owed(good.owner, Kind.BOT_SUSPENDED) == []


def test_a_staff_suspension_is_told(make_user: Any, make_bot: Any) -> None:
    bot = make_bot(author(make_user, "owner"), "moderated")
    bot_suspend(user=make_user("staff", staff=True), bot_id=bot.pk, reason="collusion")
    [told] = owed(bot.owner, Kind.BOT_SUSPENDED)
    assert "collusion" in told.body and "only staff can lift it" in told.body
    assert told.link.endswith(f"/me/bots/{bot.pk}/")


def test_a_smoke_match_failed_is_told_and_a_passed_one_only_if_asked(make_user: Any) -> None:
    user = author(make_user, "uploader")
    bot = bot_create(owner=user, name="smoky", kind="hosted")
    v1 = bot_version_upload(user=user, bot_id=bot.pk, filename="bot.py", data=b"x = 1\n")
    bot_version_smoke_record(version_id=v1.pk, passed=False, outcome="failed: crashed", log=b"")
    [told] = owed(user, Kind.SMOKE_FAILED)
    assert told.subject == "smoky v1 failed its smoke match"
    assert "failed: crashed" in told.body and told.key == f"version:{v1.pk}"
    # The same smoke match recorded again (played again) is the same event.
    bot_version_smoke_record(version_id=v1.pk, passed=False, outcome="failed: crashed", log=b"")
    assert len(owed(user, Kind.SMOKE_FAILED)) == 1
    v2 = bot_version_upload(user=user, bot_id=bot.pk, filename="bot.py", data=b"x = 2\n")
    bot_version_smoke_record(version_id=v2.pk, passed=True, outcome="passed: rank 1", log=b"")
    assert owed(user, Kind.SMOKE_PASSED) == [], "good news is not mailed by default"


@pytest.mark.django_db(transaction=True)  # the Play hub closes its database connection
def test_a_connected_bot_refused_is_told_once_per_reason_and_hour(
    make_user: Any, settings: Any
) -> None:
    settings.LADDER_PRESENCE_URL = "redis://127.0.0.1:1/0"  # configured; never reached here
    settings.LADDER_NOTIFY_REFUSED_QUIET_S = 10**9  # one window for the whole test
    user = author(make_user, "remote")
    bot = bot_create(owner=user, name="conn", kind="connected")
    bot_suspend(user=make_user("staff", staff=True), bot_id=bot.pk, reason="abuse")
    hub = PlayHub("127.0.0.1:1")
    hello = pb.PlayClientMessage(hello=pb.PlayHello(bot="conn", label="t"))

    async def messages() -> AsyncIterator[pb.PlayClientMessage]:
        yield hello

    async def offload(work: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.to_thread(work, *args)  # as the server's pool runs it

    for _ in range(3):  # a bot that keeps reconnecting
        with pytest.raises(GrpcError) as refused:
            opening = hub.open(messages().__anext__, None, user=user, token_id=1, offload=offload)  # type: ignore[arg-type]
            asyncio.run(opening)
        assert refused.value.code == grpc.StatusCode.FAILED_PRECONDITION
    [told] = owed(user, Kind.CONNECTED_REFUSED)
    assert "suspended by staff: abuse" in told.body
    assert told.subject == "Your connected bot conn was refused"
    assert told.data["code"] == "FAILED_PRECONDITION"
