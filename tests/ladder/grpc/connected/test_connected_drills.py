"""Connected bots when things go wrong: killed bots, killed servers, revoked tokens.

Real processes throughout (Redis, grpcservers, a Celery worker, SDK bots); every
wait is bounded and follows what the processes report (logs, match rows).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

from digdown.v1 import ladder_pb2 as pb
from tests.ladder.grpc.connected.conftest import start_grpcserver, wait_connected
from tests.ladder.grpc.connected.test_connected_play import create_connected, ladder_stub
from tests.support.processes import ROOT
from tests.support.workers import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]


class PlayMatch:
    """``manage.py playmatch`` in the background (it follows the match until recorded)."""

    def __init__(self, env: dict[str, str], procdir: Path, *bots: str) -> None:
        self.log_path = procdir / f"playmatch-{'-'.join(bots)}.log"
        with self.log_path.open("wb") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "manage.py", "playmatch", "--bots", ",".join(bots),
                 "--seed", "5", "--unrated", "--timeout", "150"],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def match_id(self) -> int:
        found = wait_until(
            lambda: re.search(r"match (\d+):", self.log_path.read_text()), 60, "the match queued"
        )
        return int(found.group(1))

    def wait(self) -> str:
        self.proc.wait(180)
        return self.log_path.read_text()


def seats_of(match_id: int) -> dict[str, Any]:
    from ladder.matches.models import MatchSeat

    return {
        s.bot.name: s for s in MatchSeat.objects.filter(match_id=match_id).select_related("bot")
    }


def holder(bots: list[Any], match_id: int) -> Any:
    """Which of ``bots`` (processes of one bot) was handed the match's handshake."""
    line = f"match {match_id}: playing seat"
    return wait_until(
        lambda: next((b for b in bots if line in b.log()), None), 60, "the match's handshake"
    )


def test_a_killed_bot_forfeits_only_the_matches_it_held_and_a_new_one_plays(
    server_a: Any, connect_worker: Any, connect_env: dict[str, str], user_token: Any,
    start_connected: Any, grpc_procdir: Path,
) -> None:  # fmt: skip
    _, dave = user_token("dave")
    create_connected(ladder_stub(server_a.address), dave, "kil", "kilopp")
    opp = start_connected("kilopp", dave, server_a.address)
    first = start_connected("kil", dave, server_a.address, "--think-ms", "20")
    second = start_connected("kil", dave, server_a.address, "--think-ms", "20")
    for bot in (opp, first, second):
        wait_connected(bot)

    game = PlayMatch(connect_env, grpc_procdir, "kil", "kilopp")
    match_id = game.match_id()
    held = holder([first, second], match_id)
    # Killed mid-game, not between its handshake's log line and the answer it sends.
    wait_until(lambda: "first decision" in held.log(), 60, "the holder's first decision")
    held.stop(signal.SIGKILL)
    other = second if held is first else first
    out = game.wait()
    seat = seats_of(match_id)["kil"]
    assert "dead" in seat.forfeit_reason and "stream closed" in seat.forfeit_reason, out

    # Its other stream plays the next match as if nothing happened.
    again = PlayMatch(connect_env, grpc_procdir, "kil", "kilopp")
    next_id = again.match_id()
    assert holder([other], next_id) is other
    again.wait()
    assert not seats_of(next_id)["kil"].forfeit_reason

    # A process started afterwards (the bot reconnecting) takes new matches.
    other.stop()
    fresh = start_connected("kil", dave, server_a.address, tag="-fresh")
    wait_connected(fresh)
    last = PlayMatch(connect_env, grpc_procdir, "kil", "kilopp")
    last_id = last.match_id()
    assert holder([fresh], last_id) is fresh
    last.wait()
    assert not seats_of(last_id)["kil"].forfeit_reason


def test_a_killed_server_sends_its_bots_to_another_and_the_match_goes_on(
    connect_worker: Any, connect_env: dict[str, str], user_token: Any, start_connected: Any,
    grpc_procdir: Path,
) -> None:  # fmt: skip
    doomed = start_grpcserver(connect_env, grpc_procdir, "connect-doomed")
    spare = start_grpcserver(connect_env, grpc_procdir, "connect-spare")
    try:
        _, erin = user_token("erin")
        create_connected(ladder_stub(spare.address), erin, "hop", "hopopp")
        # "hop" lists both servers and connects to the first; its opponent to the spare one.
        hop = start_connected("hop", erin, f"{doomed.address},{spare.address}", "--think-ms", "20")
        opp = start_connected("hopopp", erin, spare.address)
        wait_connected(hop)
        wait_connected(opp)
        assert f"connected to {doomed.address}" in hop.log()

        game = PlayMatch(connect_env, grpc_procdir, "hop", "hopopp")
        match_id = game.match_id()
        holder([hop], match_id)
        wait_until(lambda: "first decision" in hop.log(), 60, "hop's first decision")
        doomed.stop(signal.SIGKILL)  # no goodbye: its streams and records just stop
        wait_connected(hop, times=2)
        assert f"connected to {spare.address}" in hop.log()
        out = game.wait()
        seats = seats_of(match_id)
        assert seats["hop"].rank and not seats["hop"].forfeit_reason, out + hop.log()
        assert "relay" in connect_worker.log() and "lost" in connect_worker.log()
    finally:
        spare.stop()
        doomed.stop()


def test_a_revoked_tokens_stream_closes_at_once(
    server_a: Any, user_token: Any, start_connected: Any
) -> None:
    from ladder.accounts.models import ApiToken
    from ladder.accounts.services import token_create, token_revoke

    user, frank = user_token("frank")
    create_connected(ladder_stub(server_a.address), frank, "revo")
    second = token_create(user=user, name="for the bot")
    bot = start_connected("revo", second.secret, server_a.address)
    wait_connected(bot)
    token_revoke(user=user, token_id=ApiToken.objects.get(prefix=second.secret[:12]).pk)
    assert bot.proc.wait(30) == 2  # refused for good: the SDK does not reconnect
    assert "UNAUTHENTICATED" in bot.log() and "revoked" in bot.log()


def raw_play(address: str, token: str | None, messages: list[pb.PlayClientMessage]) -> Any:
    """Open Play, send ``messages``, read until the stream ends; its status (code, details)."""
    md = [("authorization", f"Bearer {token}")] if token else []
    channel = grpc.insecure_channel(address)
    call = pb_stub(channel).Play(iter(messages), metadata=md, timeout=30)
    try:
        for _ in call:
            pass
    except grpc.RpcError as exc:
        return exc.code(), exc.details()
    finally:
        channel.close()
    return grpc.StatusCode.OK, ""


def pb_stub(channel: grpc.Channel) -> Any:
    from digdown.v1 import ladder_pb2_grpc

    return ladder_pb2_grpc.LadderStub(channel)


def hello(bot: str) -> pb.PlayClientMessage:
    return pb.PlayClientMessage(hello=pb.PlayHello(bot=bot))


def test_who_may_open_a_stream_for_which_bot(server_a: Any, user_token: Any) -> None:
    _, gina = user_token("gina")
    _, hank = user_token("hank")
    stub = ladder_stub(server_a.address)
    create_connected(stub, gina, "mine")
    stub.CreateBot(pb.CreateBotRequest(name="notplug", kind="HOSTED"), metadata=[
        ("authorization", f"Bearer {gina}")], timeout=10)  # fmt: skip
    addr = server_a.address
    code, details = raw_play(addr, hank, [hello("mine")])
    assert code == grpc.StatusCode.PERMISSION_DENIED, details
    assert raw_play(addr, None, [hello("mine")])[0] == grpc.StatusCode.UNAUTHENTICATED
    assert raw_play(addr, "wrong", [hello("mine")])[0] == grpc.StatusCode.UNAUTHENTICATED
    assert raw_play(addr, gina, [hello("nobody")])[0] == grpc.StatusCode.NOT_FOUND
    code, details = raw_play(addr, gina, [hello("notplug")])
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "CONNECTED" in details
    ping = pb.PlayClientMessage(ping=pb.PlayPing(nonce=1))
    code, details = raw_play(addr, gina, [ping])
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "hello" in details


def test_the_matchmaker_offers_a_connected_bot_only_while_it_is_connected(
    server_a: Any, user_token: Any, start_connected: Any
) -> None:
    from datetime import timedelta

    from django.test import Client
    from django.utils import timezone

    from ladder.bots.models import Bot
    from ladder.ladders import ladder_default
    from ladder.matchmaking.selectors import matchmaking_candidates

    ivy_user, ivy = user_token("ivy")
    create_connected(ladder_stub(server_a.address), ivy, "shy")
    shy = Bot.objects.get(name="shy")

    def offered() -> bool:
        since = timezone.now() - timedelta(hours=1)
        found = matchmaking_candidates(ladder=ladder_default().key, recent_since=since)
        return any(c.bot_id == shy.pk for c in found)

    owner = Client()
    owner.force_login(ivy_user)
    stranger = Client()
    stranger.force_login(user_token("jay")[0])

    def page(client: Any) -> str:
        response = client.get(f"/bots/{shy.pk}/")
        assert response.status_code == 200
        return response.content.decode()

    assert not offered()
    assert "<strong>0</strong> open streams" in page(owner)
    bot = start_connected("shy", ivy, server_a.address)
    wait_connected(bot)
    assert offered()
    # Its owner sees the live stream (how many, since when, its label); nobody else does.
    shown = page(owner)
    assert "<strong>1</strong> open stream:" in shown and f"pid {bot.proc.pid}" in shown
    manage = owner.get(f"/me/bots/{shy.pk}/").content.decode()
    assert "<strong>1</strong> open stream:" in manage
    assert (
        'id="streams"' not in page(stranger)
        and 'id="streams"' not in Client().get(f"/bots/{shy.pk}/").content.decode()
    )
    assert bot.stop() == 0  # a clean close forgets the stream at once
    wait_until(lambda: not offered(), 20, "shy no longer offered")
    assert "<strong>0</strong> open streams" in page(owner)


def test_without_its_redis_a_server_says_so_and_errs_nothing(
    connect_env: dict[str, str], grpc_procdir: Path, user_token: Any
) -> None:
    gone = {**connect_env, "LADDER_PRESENCE_URL": f"redis+socket://{grpc_procdir}/no-redis.sock"}
    server = start_grpcserver(gone, grpc_procdir, "connect-no-redis")
    try:
        _, max_ = user_token("max")
        create_connected(ladder_stub(server.address), max_, "lonely")
        code, details = raw_play(server.address, max_, [hello("lonely")])
        assert code == grpc.StatusCode.UNAVAILABLE and "presence" in details, details
        # Challenging a connected bot needs to know whether it is connected: refused clearly.
        with pytest.raises(grpc.RpcError) as err:
            ladder_stub(server.address).RequestChallenge(
                pb.RequestChallengeRequest(bot="lonely"),
                metadata=[("authorization", f"Bearer {max_}")],
                timeout=10,
            )
        assert err.value.code() != grpc.StatusCode.INTERNAL, err.value.details()
    finally:
        server.stop()
    assert "-> INTERNAL" not in server.log() and "Traceback" not in server.log()
