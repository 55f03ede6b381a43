"""A match that seats a connected bot with no open stream is void, not a forfeit: the
worker waits a little for the bot's stream (``LADDER_CONNECT_SEAT_WAIT_S``), then errors
the match with the reason; a bot that drops its stream between being seated and its
handshake is handled the same way. No seat forfeits, no rating moves. Before, the
absent bot's seat forfeited ("dead") and the rated result was recorded."""

from __future__ import annotations

import queue
import threading
from typing import Any

import grpc
import pytest

from digdown.v1 import ladder_pb2 as pb
from tests.ladder.grpc.connected.conftest import wait_connected
from tests.ladder.grpc.connected.test_connected_play import create_connected, ladder_stub, play
from tests.support.workers import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]


def _void(match_id: int, absent: str) -> None:
    from ladder.matches.models import Match, MatchSeat

    match = Match.objects.get(pk=match_id)
    assert match.status == Match.Status.ERRORED, (match.status, match.error)
    assert f"connected bot {absent} held no open stream" in match.error, match.error
    seats = list(MatchSeat.objects.filter(match_id=match_id))
    assert all(not s.forfeit_reason and s.rating_after is None for s in seats)


def test_a_match_seating_an_absent_connected_bot_is_void(
    server_a: Any, connect_worker: Any, connect_env: dict[str, str], user_token: Any,
    start_connected: Any,
) -> None:  # fmt: skip
    """The matchmaker's and tournaments' way in (no user asked): the worker refuses."""
    _, nia = user_token("nia-absent")
    create_connected(ladder_stub(server_a.address), nia, "here", "away")
    here = start_connected("here", nia, server_a.address)
    wait_connected(here)
    match_id, out = play(connect_env, "here", "away")
    assert "FAILED" in out  # playmatch reports the errored match
    _void(match_id, "away")


class DropsAtHandshake:
    """A connected client (answering pings) that closes its stream at its first handshake."""

    def __init__(self, address: str, token: str, bot: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.welcomed, self.dropped = threading.Event(), threading.Event()
        play = self.channel.stream_stream(
            "/digdown.v1.Ladder/Play",
            request_serializer=pb.PlayClientMessage.SerializeToString,
            response_deserializer=pb.PlayServerMessage.FromString,
        )
        self.outbox: queue.Queue[pb.PlayClientMessage | None] = queue.Queue()

        def requests() -> Any:
            yield pb.PlayClientMessage(hello=pb.PlayHello(bot=bot))
            while (item := self.outbox.get(timeout=120)) is not None:
                yield item

        self.call = play(requests(), metadata=[("authorization", f"Bearer {token}")])
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for message in self.call:
                kind = message.WhichOneof("kind")
                if kind == "welcome":
                    self.welcomed.set()
                elif kind == "ping":  # answered, so the stream stays open until the handshake
                    self.outbox.put(pb.PlayClientMessage(pong=message.ping))
                elif kind == "handshake":
                    self.dropped.set()
                    self.call.cancel()
                    return
        except grpc.RpcError:
            pass

    def close(self) -> None:
        self.outbox.put(None)
        self.call.cancel()
        self.channel.close()


def test_a_bot_that_drops_before_its_handshake_voids_the_match(
    server_a: Any, connect_worker: Any, connect_env: dict[str, str], user_token: Any,
    start_connected: Any,
) -> None:  # fmt: skip
    from ladder.bots import presence
    from ladder.bots.models import Bot

    _, ola = user_token("ola-drop")
    create_connected(ladder_stub(server_a.address), ola, "steady", "dodger")
    steady = start_connected("steady", ola, server_a.address)
    wait_connected(steady)
    dodger = DropsAtHandshake(server_a.address, ola, "dodger")
    try:
        assert dodger.welcomed.wait(20)
        dodger_id = Bot.objects.get(name="dodger").pk
        wait_until(lambda: presence.is_connected(dodger_id), 15, "the dodger's presence")
        match_id, out = play(connect_env, "steady", "dodger")
        assert dodger.dropped.is_set(), out
        _void(match_id, "dodger")
    finally:
        dodger.close()
