"""Hostile connected clients are contained: floods, huge or garbled messages, answers to
ids never asked, a client that stops reading or answers with huge replies. The stream
is closed with a clear status, and a match against such a bot still ends: the worker
is never stalled (its next match plays normally)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from digdown.v1 import bot_pb2
from digdown.v1 import ladder_pb2 as pb
from tests.ladder.grpc.connected.conftest import wait_connected
from tests.ladder.grpc.connected.test_connected_drills import PlayMatch, hello, raw_play, seats_of
from tests.ladder.grpc.connected.test_connected_play import create_connected, ladder_stub
from tests.support.workers import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


class RawBot:
    """A hand-driven Play client (bytes on the wire) running on a thread of the test."""

    def __init__(self, address: str, token: str, bot: str, behaviour: str) -> None:
        self.behaviour = behaviour
        self.outbox: queue.Queue[bytes | None] = queue.Queue()
        self.status: tuple[Any, str] | None = None
        self.welcomed = threading.Event()
        self.asked = 0
        self.channel = grpc.insecure_channel(address)
        play = self.channel.stream_stream(
            "/digdown.v1.Ladder/Play",
            request_serializer=lambda b: b,
            response_deserializer=pb.PlayServerMessage.FromString,
        )
        self.outbox.put(pb.PlayClientMessage(hello=pb.PlayHello(bot=bot)).SerializeToString())
        self.call = play(self._requests(), metadata=[("authorization", f"Bearer {token}")])
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _requests(self) -> Iterator[bytes]:
        while (item := self.outbox.get()) is not None:
            yield item

    def _read(self) -> None:
        try:
            for message in self.call:
                kind = message.WhichOneof("kind")
                if kind == "welcome":
                    self.welcomed.set()
                    if self.behaviour == "deaf":
                        self.welcomed.wait()
                        threading.Event().wait(3600)  # never reads again
                elif kind == "handshake":
                    reply = pb.PlayClientMessage(
                        handshake=pb.PlayHandshakeReply(
                            correlation_id=message.handshake.correlation_id,
                            reply=bot_pb2.HandshakeReply(name="raw", protocol_version=1),
                        )
                    )
                    self.outbox.put(reply.SerializeToString())
                elif kind == "ping" and self.behaviour == "huge":  # alive until the match
                    self.outbox.put(pb.PlayClientMessage(pong=message.ping).SerializeToString())
                elif kind == "decision" and self.behaviour == "huge":
                    self.asked += 1
                    d = message.decision
                    reply = bot_pb2.DecisionReply(action=d.request.legal_actions[0])
                    # 100 KB of unknown field in the reply: below the message limit,
                    # above the reply limit -> a "too_large" fault of that decision.
                    body = reply.SerializeToString() + _field(15, b"x" * 100_000)
                    answer = _field(1, d.correlation_id.encode()) + _field(2, body)
                    self.outbox.put(_field(3, answer))
        except grpc.RpcError as exc:
            self.status = (exc.code(), exc.details())

    def close(self) -> None:
        self.outbox.put(None)
        self.call.cancel()
        self.channel.close()


def ping(n: int) -> pb.PlayClientMessage:
    return pb.PlayClientMessage(ping=pb.PlayPing(nonce=n))


def test_floods_huge_garbled_and_stray_messages_close_the_stream(
    server_a: Any, user_token: Any
) -> None:
    _, jo = user_token("jo")
    create_connected(ladder_stub(server_a.address), jo, "rude")
    addr = server_a.address
    code, details = raw_play(addr, jo, [hello("rude"), *(ping(i) for i in range(1000))])
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "messages per second" in details
    big = pb.PlayClientMessage(hello=pb.PlayHello(bot="rude", label="x" * 300_000))
    code, details = raw_play(addr, jo, [big])
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "larger than max" in details
    stray = [
        pb.PlayClientMessage(decision=pb.PlayDecisionReply(correlation_id=f"d{900 + i}"))
        for i in range(30)
    ]
    code, details = raw_play(addr, jo, [hello("rude"), *stray])
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "not answers" in details

    garbage = grpc.insecure_channel(addr).stream_stream(
        "/digdown.v1.Ladder/Play", request_serializer=lambda b: b,
        response_deserializer=pb.PlayServerMessage.FromString,
    )  # fmt: skip
    hello_bytes = hello("rude").SerializeToString()
    with pytest.raises(grpc.RpcError) as err:
        for _ in garbage(
            iter([hello_bytes, b"\xff\xff\xff\xff"]),
            metadata=[("authorization", f"Bearer {jo}")],
            timeout=30,
        ):
            pass
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not a PlayClientMessage" in err.value.details()


@pytest.mark.parametrize("behaviour", ["deaf", "huge"])
def test_a_hostile_connected_bot_cannot_stall_a_worker(
    behaviour: str, server_a: Any, connect_worker: Any, connect_env: dict[str, str],
    user_token: Any, start_connected: Any, grpc_procdir: Path,
) -> None:  # fmt: skip
    _, kim = user_token(f"kim{behaviour}")
    rude, polite = f"{behaviour}bot", f"{behaviour}opp"
    create_connected(ladder_stub(server_a.address), kim, rude, polite)
    opp = start_connected(polite, kim, server_a.address)
    wait_connected(opp)
    raw = RawBot(server_a.address, kim, rude, behaviour)
    try:
        assert raw.welcomed.wait(20)
        game = PlayMatch(connect_env, grpc_procdir, rude, polite)
        match_id = game.match_id()
        out = game.wait()
        seat = seats_of(match_id)[rude]
        if behaviour == "deaf":  # it never answers: timeouts until the third fault, or
            # (its pings unanswered too) its stream was closed before the match began: void
            assert seat.forfeit_reason or "held no open stream" in out, out
        else:
            assert raw.asked >= 3 and seat.forfeit_reason, out  # three too_large faults
        # The worker goes on: the next match (its opponent against itself) plays normally.
        create_connected(ladder_stub(server_a.address), kim, f"{polite}2")
        other = start_connected(f"{polite}2", kim, server_a.address)
        wait_connected(other)
        after = PlayMatch(connect_env, grpc_procdir, polite, f"{polite}2")
        after_id = after.match_id()
        after.wait()
        assert all(not s.forfeit_reason for s in seats_of(after_id).values())
    finally:
        raw.close()


def test_open_streams_hold_no_database_connection(server_a: Any, user_token: Any) -> None:
    """Hundreds of streams would otherwise exhaust the database's connections."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("counts PostgreSQL's connections")
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")
        since = cursor.fetchone()[0]

    def opened_since() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND backend_start > %s AND pid <> pg_backend_pid()",
                [since],
            )
            return int(cursor.fetchone()[0])

    _, ned = user_token("ned")
    names = [f"idle{i}" for i in range(4)]
    create_connected(ladder_stub(server_a.address), ned, *names)
    bots = [RawBot(server_a.address, ned, name, "idle") for name in names]
    try:
        assert all(b.welcomed.wait(20) for b in bots)
        # Each admission used a connection; none is kept while the streams stay open.
        wait_until(lambda: opened_since() < len(bots), 15, "the streams' connections closed")
        assert all(b.status is None for b in bots)  # still open
    finally:
        for b in bots:
            b.close()


def test_streams_per_bot_are_limited(server_a: Any, user_token: Any) -> None:
    from django.conf import settings

    _, ola = user_token("ola")
    create_connected(ladder_stub(server_a.address), ola, "many")
    limit = settings.LADDER_CONNECT_STREAMS_PER_BOT
    bots = [RawBot(server_a.address, ola, "many", "idle") for _ in range(limit)]
    try:
        assert all(b.welcomed.wait(20) for b in bots)
        code, details = raw_play(server_a.address, ola, [hello("many")])
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and f"limit of {limit}" in details
    finally:
        for b in bots:
            b.close()
