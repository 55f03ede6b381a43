"""The bookkeeping of one Play stream, driven directly: answers find their request,
late answers are dropped quietly, strays and floods close the stream."""

from __future__ import annotations

import threading
from dataclasses import replace

import grpc
import pytest

from digdown.v1 import ladder_pb2 as pb
from ladder.bots.presence import StreamRecord
from ladder.grpc.play import MAX_STRAY_ANSWERS, Limits, PlayStream, StreamGone

LIMITS = Limits(
    streams_per_bot=4, streams_per_user=16, streams_per_process=8, messages_per_s=5,
    max_message_bytes=1024, ping_interval_s=10, ping_timeout_s=20,
)  # fmt: skip


def stream(limits: Limits = LIMITS) -> PlayStream:
    return PlayStream(StreamRecord("s1", 1, 1, 1, "relay:1", 0.0), limits)


def decision(correlation: str) -> pb.PlayServerMessage:
    return pb.PlayServerMessage(decision=pb.PlayDecision(correlation_id=correlation))


def answer(correlation: str) -> pb.PlayClientMessage:
    return pb.PlayClientMessage(decision=pb.PlayDecisionReply(correlation_id=correlation))


def ask(s: PlayStream, timeout_s: float) -> tuple[threading.Thread, list[object]]:
    out: list[object] = []

    def run() -> None:
        try:
            out.append(s.request("decision", decision, timeout_s))
        except StreamGone as exc:
            out.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


def test_an_answer_reaches_its_request_and_many_answers_are_not_a_flood() -> None:
    s = stream()
    for _ in range(3 * LIMITS.messages_per_s):  # answers are not rate-limited
        thread, out = ask(s, 10.0)
        sent = s.outbox.get(timeout=10)
        assert s._accept(answer(sent.decision.correlation_id))
        thread.join(10)
        assert isinstance(out[0], pb.PlayDecisionReply)
    assert s.closed is None and s.stray == 0


def test_a_late_answer_is_dropped_quietly() -> None:
    s = stream()
    thread, out = ask(s, 0.01)
    thread.join(10)
    assert isinstance(out[0], StreamGone) and out[0].code == grpc.StatusCode.DEADLINE_EXCEEDED
    late = s.outbox.get(timeout=1).decision.correlation_id
    assert s._accept(answer(late)) and s.stray == 0


def test_strays_and_floods_close_the_stream_and_fail_what_waits() -> None:
    s = stream(replace(LIMITS, messages_per_s=1000))  # strays count against it too
    for i in range(MAX_STRAY_ANSWERS):
        assert s._accept(answer(f"x{i}"))
    thread, out = ask(s, 30.0)
    s.outbox.get(timeout=10)
    assert not s._accept(answer("x-last"))
    thread.join(10)
    assert s.closed is not None and s.closed[0] == grpc.StatusCode.INVALID_ARGUMENT
    assert isinstance(out[0], StreamGone) and "bot stream closed" in out[0].message

    flooded = stream()
    pings = [pb.PlayClientMessage(ping=pb.PlayPing(nonce=n)) for n in range(100)]
    assert not all(flooded._accept(p) for p in pings)
    assert flooded.closed is not None and "messages per second" in flooded.closed[1]


def test_a_closed_stream_refuses_requests() -> None:
    s = stream()
    s.close(grpc.StatusCode.CANCELLED, "the bot closed its stream")
    with pytest.raises(StreamGone) as err:
        s.request("decision", decision, 1.0)
    assert err.value.code == grpc.StatusCode.UNAVAILABLE
    assert err.value.message.startswith("bot stream closed")
