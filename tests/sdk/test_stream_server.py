"""The SDK's game streams served on threads of their own (digdown.stream_server), as the
thread-pool server served them: replies in order, errors as statuses, the stream limit,
cancellation and idle streams, and grpcio's own model when asked. A real BotServer on
loopback, driven by the runner's CallStream."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from digdown import stream_server, wire
from digdown.bot import BotServer, BotService
from digdown.v1 import bot_pb2, bot_pb2_grpc
from workers.runner.streams import CallStream

LEGAL = [wire.action_to_proto({"kind": "DONE"}), wire.action_to_proto({"kind": "STASH"})]


def _act(observation: dict[str, Any], legal: list[dict[str, Any]]) -> int:
    """Answers the index the observation's ``round`` names; round 9 fails, round 8 stalls."""
    if observation["round"] == 9:
        raise RuntimeError("asked to fail")
    if observation["round"] == 8:
        time.sleep(1.0)
    return observation["round"] % 2


def _request(round_: int) -> bot_pb2.DecisionRequest:
    msg = bot_pb2.DecisionRequest(game_id="g", seat=0, legal_actions=LEGAL)
    msg.observation.round = round_
    return msg


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., tuple[BotServer, Any]]]:
    started: list[tuple[BotServer, grpc.Channel]] = []

    def make(*, max_streams: int = 64, threaded: bool = False) -> tuple[BotServer, Any]:
        if threaded:
            monkeypatch.setenv("DIGDOWN_STREAM_SERVER", "threaded")
        server = BotServer(BotService(_act), "127.0.0.1:0", max_streams=max_streams)
        server.start()
        channel = grpc.insecure_channel(server.address)
        started.append((server, channel))
        return server, bot_pb2_grpc.BotStub(channel)

    yield make
    for server, channel in started:
        channel.close()
        server.stop(0.5)


def test_the_game_streams_are_served_on_their_own_threads(serve: Any) -> None:
    server, stub = serve()
    assert server.streams is not None and server.streams.methods == ["/digdown.v1.Bot/ActStream"]
    stream = CallStream(stub.ActStream)
    kinds = [stream.ask(_request(r), 5.0).action.WhichOneof("kind") for r in range(10, 30)]
    assert kinds == ["done", "stash"] * 10
    stream.close(grace_s=1.0)
    assert stub.Act(_request(3), timeout=5).action.WhichOneof("kind") == "stash"  # unary too


def test_an_act_error_ends_the_stream_with_internal_and_its_reason(serve: Any) -> None:
    _, stub = serve()
    stream = CallStream(stub.ActStream)
    assert stream.ask(_request(1), 5.0).HasField("action")
    with pytest.raises(grpc.RpcError) as err:
        stream.ask(_request(9), 5.0)
    assert err.value.code() == grpc.StatusCode.INTERNAL
    assert "asked to fail" in err.value.details()
    assert CallStream(stub.ActStream).ask(_request(2), 5.0).HasField("action")  # a new one works


def test_past_the_stream_limit_a_stream_is_refused_and_a_cancelled_one_frees_its_slot(
    serve: Any,
) -> None:
    _, stub = serve(max_streams=1)
    first = CallStream(stub.ActStream)
    assert first.ask(_request(1), 5.0).HasField("action")
    second = CallStream(stub.ActStream)
    with pytest.raises(grpc.RpcError) as err:
        second.ask(_request(1), 5.0)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    # A reply that comes too late: the runner cancels the stream; its slot comes back.
    with pytest.raises(grpc.RpcError) as late:
        first.ask(_request(8), 0.2)
    assert late.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    deadline = time.monotonic() + 5
    while True:
        try:
            assert CallStream(stub.ActStream).ask(_request(2), 5.0).HasField("action")
            break
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert time.monotonic() < deadline, "the cancelled stream kept its slot"
            time.sleep(0.1)


def test_an_idle_stream_is_cancelled_by_the_server(serve: Any) -> None:
    server, stub = serve()
    stream = CallStream(stub.ActStream)
    assert stream.ask(_request(1), 5.0).HasField("action")
    assert server.limit.cancel_idle_streams(0.0) == 1
    with pytest.raises(grpc.RpcError) as err:
        stream.ask(_request(1), 5.0)
    assert err.value.code() in (grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE)


def test_a_stop_with_a_stream_open_ends_it_after_the_grace(serve: Any) -> None:
    server, stub = serve()
    stream = CallStream(stub.ActStream)
    assert stream.ask(_request(1), 5.0).HasField("action")
    stopping = threading.Thread(target=server.stop, args=(0.2,))
    started = time.monotonic()
    stopping.start()
    stopping.join(10)
    assert not stopping.is_alive() and time.monotonic() - started < 5
    with pytest.raises(grpc.RpcError):
        stream.ask(_request(1), 5.0)


def test_grpcios_thread_pool_serves_them_when_asked_or_without_its_internals(
    serve: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    server, stub = serve(threaded=True)
    assert server.streams is None
    assert CallStream(stub.ActStream).ask(_request(1), 5.0).action.WhichOneof("kind") == "stash"
    monkeypatch.delenv("DIGDOWN_STREAM_SERVER")
    monkeypatch.setattr(stream_server, "cygrpc", None)
    server, stub = serve()
    assert server.streams is None
    assert CallStream(stub.ActStream).ask(_request(2), 5.0).action.WhichOneof("kind") == "done"
