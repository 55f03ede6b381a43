"""Whose fault a relayed failure is, by its typed reason (never the words of a message).

A real relay (``RelayServer``, the production shape) on loopback holds a real
``PlayHub``; a stream is put in the hub as ``PlayHub.play`` would after a bot's hello,
and a thread of the test plays the bot (reads the stream's outbox, answers through the
stream's reader entry point). The worker's side is the real ``ConnectedTransport``;
only where the bot's streams are (presence, in Redis) is a list of this test.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from digdown.v1 import bot_pb2, faults_pb2, game_pb2
from digdown.v1 import ladder_pb2 as pb
from ladder.bots.presence import StreamRecord
from ladder.grpc.play import Limits, PlayHub, PlayStream
from ladder.grpc.relay import RelayServer
from workers.connected import ConnectedSeatLost, ConnectedTransport, RelayError
from workers.runner import TimeControl

LIMITS = Limits(
    streams_per_bot=4, streams_per_user=16, streams_per_process=8, messages_per_s=50,
    max_message_bytes=256 * 1024, ping_interval_s=60, ping_timeout_s=60,
)  # fmt: skip
ACTION = game_pb2.Action(done=game_pb2.Done())


class Relay:
    """A relay process's two halves: the hub of streams and the relay server in front."""

    def __init__(self, listen: str = "127.0.0.1:0") -> None:
        self.hub = PlayHub("", LIMITS)
        self.server = RelayServer(listen, self.hub, max_workers=4)
        self.server.start()
        self.address = self.server.address
        self.hub.relay_address = self.address

    def open_stream(self, stream_id: str, answer: Callable[[Any], bool]) -> PlayStream:
        """A bot's stream held here; ``answer(message)`` says whether the bot answers it."""
        record = StreamRecord(stream_id, 1, 1, 1, self.address, time.time())
        stream = PlayStream(record, LIMITS)
        with self.hub._lock:
            self.hub._streams[stream_id] = stream

        def bot() -> None:
            while stream.closed is None:
                try:
                    message = stream.outbox.get(timeout=0.1)
                except Exception:
                    continue
                if not isinstance(message, pb.PlayServerMessage):
                    return
                if message.WhichOneof("kind") == "decision" and answer(message):
                    reply = pb.PlayDecisionReply(
                        correlation_id=message.decision.correlation_id,
                        reply=bot_pb2.DecisionReply(action=ACTION),
                    )
                    stream._accept(pb.PlayClientMessage(decision=reply))

        threading.Thread(target=bot, daemon=True).start()
        return stream

    def stop(self) -> None:
        self.hub.stop()
        self.server.stop(0.5)


@pytest.fixture
def relays() -> Iterator[list[Relay]]:
    made = [Relay(), Relay()]
    yield made
    for r in made:
        r.stop()


def transport(streams: list[StreamRecord], grace_s: float = 5.0) -> ConnectedTransport:
    return ConnectedTransport(
        bot_id=1, bot_name="b", match_id=1, seat=0,
        time_control=TimeControl(decision_s=0.5, bank_s=1.0),
        lookup=lambda _bot: list(streams), reconnect_grace_s=grace_s,
    )  # fmt: skip


def request() -> bot_pb2.DecisionRequest:
    return bot_pb2.DecisionRequest(game_id="g", seat=0, legal_actions=[ACTION])


def test_a_stream_the_bot_closed_is_the_bots_fault_and_proof_it_is_gone(
    relays: list[Relay],
) -> None:
    stream = relays[0].open_stream("s1", lambda m: False)
    stream.close(grpc.StatusCode.CANCELLED, "the bot closed its stream")
    t = transport([stream.record])
    with pytest.raises(RelayError) as err:
        t.act(request(), 2.0)
    assert err.value.reason == faults_pb2.FAULT_REASON_STREAM_CLOSED and not err.value.ladders
    assert t.gone()


def test_a_late_bot_is_the_bots_fault(relays: list[Relay]) -> None:
    stream = relays[0].open_stream("s1", lambda m: False)  # never answers
    t = transport([stream.record])
    with pytest.raises(RelayError) as err:
        t.act(request(), 0.3)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert err.value.reason == faults_pb2.FAULT_REASON_BOT_LATE and not t.gone()


def test_a_server_that_stops_mid_decision_is_the_ladders_and_the_decision_is_asked_again(
    relays: list[Relay],
) -> None:
    """The bot's server is restarted (stopped) while the bot thinks: the decision waits for
    the bot's stream on another server and is asked again there; the wait is not the
    bot's, and the bot is not gone (before: "bot stream closed: the server is stopping",
    read as a dead bot, a forfeit)."""
    first, second = relays
    asked = threading.Event()

    def think(message: Any) -> bool:
        asked.set()
        return False  # still thinking when its server stops

    old = first.open_stream("s1", think)
    streams = [old.record]
    t = transport(streams)

    def restart() -> None:
        assert asked.wait(10)
        first.hub.stop()  # what SIGTERM does: streams closed, SERVER_STOPPING
        streams[:] = []
        time.sleep(0.5)  # the bot reconnects a moment later, to the other server
        streams.append(second.open_stream("s2", lambda m: True).record)

    threading.Thread(target=restart, daemon=True).start()
    reply = t.act(request(), 0.4)
    assert isinstance(reply, bot_pb2.DecisionReply) and reply.action == ACTION
    assert not t.gone() and t.relays_lost == 1
    assert t.take_uncharged_s() >= 0.4  # the wait for the reconnect, the ladder's


def test_the_only_server_restarted_at_its_address_is_bound_again(relays: list[Relay]) -> None:
    """The only server is restarted (an upgrade) while the bot thinks: it comes back at the
    same relay address, holding the bot's new stream, and the decision is asked again
    there (before: the lost relay's address was marked dead, so the new stream was never
    bound, the seat waited out the grace and the match was released)."""
    first = relays[0]
    asked = threading.Event()

    def think(message: Any) -> bool:
        asked.set()
        return False

    streams = [first.open_stream("s1", think).record]
    t = transport(streams)

    def restart() -> None:
        assert asked.wait(10)
        first.hub.stop()  # SIGTERM: streams closed, SERVER_STOPPING
        first.server.stop(0.0)
        streams[:] = []
        time.sleep(0.3)
        again = Relay(first.address)  # the same address, as a restarted grpcserver's
        relays.append(again)  # stopped by the fixture
        streams.append(again.open_stream("s2", lambda m: True).record)

    threading.Thread(target=restart, daemon=True).start()
    started = time.monotonic()
    reply = t.act(request(), 0.4)
    assert isinstance(reply, bot_pb2.DecisionReply) and reply.action == ACTION
    assert not t.gone() and t.relays_lost == 1
    assert time.monotonic() - started < 4.0  # not the grace (5 s) waited out


def test_a_stream_the_restarted_server_never_held_is_the_ladders_loss(
    relays: list[Relay],
) -> None:
    """The other seat of such a match: bound to a stream of the server's previous process,
    its next decision reaches the restarted process, which never held that stream. That is
    the ladder's loss (RELAY_LOST: the stream was opened before this process started), not
    the bot's stream closed: the decision is asked again on the bot's new stream (before:
    STREAM_CLOSED, read as a dead bot, the seat forfeited and the match was rated)."""
    first = relays[0]
    streams = [first.open_stream("s1", lambda m: True).record]
    t = transport(streams)
    assert isinstance(t.act(request(), 0.4), bot_pb2.DecisionReply)  # bound to s1
    first.hub.stop()
    first.server.stop(0.0)
    again = Relay(first.address)  # restarted at the same address
    relays.append(again)
    streams[:] = [again.open_stream("s2", lambda m: True).record]
    # The worker's channel reconnects (its backoff is at most 0.5 s): the next call reaches
    # the new process and names s1.
    time.sleep(1.5)
    reply = t.act(request(), 0.4)
    assert isinstance(reply, bot_pb2.DecisionReply) and reply.action == ACTION
    assert not t.gone() and t.relays_lost == 1


def test_a_stream_lost_by_the_ladder_and_not_back_in_the_grace_releases_the_match(
    relays: list[Relay],
) -> None:
    stream = relays[0].open_stream("s1", lambda m: False)
    streams = [stream.record]
    t = transport(streams, grace_s=1.0)
    # The relay is gone (its record stays until it expires): no reason with the failure.
    relays[0].server.stop(0.0)
    started = time.monotonic()
    with pytest.raises(ConnectedSeatLost, match="nobody is charged"):
        t.act(request(), 0.3)
    assert 0.9 <= time.monotonic() - started < 10
    assert not t.gone()
