"""Canary: the grpcio internals that the runner's stream calls (workers/runner/streams.py)
and the SDK's game-stream server (digdown.stream_server) drive are still there.

Both fall back to grpcio's public API by themselves when a release moves these names
(logged once), so a grpcio upgrade would not break a game: it would only lose what the
internals buy (docs/benchmark-report.md, "Private library internals kept"). These tests
make that loss loud instead of silent: they name every private attribute relied on, and
check that on this grpcio the fast path is the one taken and that the public fallback
(`LADDER_STREAM_CALL=threaded`, `DIGDOWN_STREAM_SERVER=threaded`) answers the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from digdown import stream_server, wire
from digdown.bot import BotServer, BotService
from digdown.v1 import bot_pb2, bot_pb2_grpc
from tests.support.loopback import serve
from workers.runner import streams
from workers.runner.streams import CallStream, SingleThreadedCall, ThreadedCall

METHOD = "/canary.Echo/Chat"

# Every private name the two modules use, where grpcio keeps it (grpcio 1.85).
CYGRPC = (
    "Channel",
    "CompletionQueue",
    "CompletionType",
    "OperationType",
    "PropagationConstants",
    "ReceiveCloseOnServerOperation",
    "ReceiveInitialMetadataOperation",
    "ReceiveMessageOperation",
    "ReceiveStatusOnClientOperation",
    "SendCloseFromClientOperation",
    "SendInitialMetadataOperation",
    "SendMessageOperation",
    "SendStatusFromServerOperation",
)
COMMON = ("STATUS_CODE_TO_CYGRPC_STATUS_CODE", "CYGRPC_STATUS_CODE_TO_STATUS_CODE", "decode")
CHANNEL = (
    "_UnaryUnaryMultiCallable",
    "_determine_deadline",
    "_handle_event",
    "_end_unary_response_blocking",
)
STREAM_METHOD = ("_channel", "_method", "_target", "_context", "_registered_call_handle")
UNARY_METHOD = (*STREAM_METHOD, "_prepare", "_request_serializer", "_response_deserializer")
SERVER_STATE = ("registered_method_handlers", "server", "completion_queue", "lock", "stage")


def test_grpcios_private_names_are_where_the_modules_look() -> None:
    from grpc import _channel, _common
    from grpc._cython import cygrpc  # type: ignore[attr-defined]

    assert streams.cygrpc is cygrpc and stream_server.cygrpc is cygrpc
    missing = [f"cygrpc.{n}" for n in CYGRPC if not hasattr(cygrpc, n)]
    missing += [f"_common.{n}" for n in COMMON if not hasattr(_common, n)]
    missing += [f"_channel.{n}" for n in CHANNEL if not hasattr(_channel, n)]
    assert hasattr(cygrpc.OperationType, "receive_message")
    assert hasattr(cygrpc.CompletionType, "queue_shutdown")
    assert hasattr(cygrpc.PropagationConstants, "GRPC_PROPAGATE_DEFAULTS")
    assert grpc.StatusCode.CANCELLED in _common.STATUS_CODE_TO_CYGRPC_STATUS_CODE
    assert not missing, f"grpcio {grpc.__version__} moved: {missing}"


@pytest.fixture
def channel() -> Iterator[grpc.Channel]:
    def echo(request_iterator: Iterator[bytes], context: Any) -> Iterator[bytes]:
        yield from request_iterator

    server, address = serve("canary.Echo", {"Chat": grpc.stream_stream_rpc_method_handler(echo)})
    ch = grpc.insecure_channel(address)
    try:
        yield ch
    finally:
        ch.close()
        server.stop(0.5)


def test_the_runner_drives_this_grpcios_calls_itself(
    channel: grpc.Channel, monkeypatch: pytest.MonkeyPatch
) -> None:
    method = channel.stream_stream(METHOD)
    unary = channel.unary_unary("/canary.Echo/Unary")
    assert [n for n in STREAM_METHOD if not hasattr(method, n)] == []
    assert [n for n in UNARY_METHOD if not hasattr(unary, n)] == []
    assert isinstance(method._channel, streams.cygrpc.Channel)
    assert hasattr(method._channel, "segregated_call")
    monkeypatch.delenv("LADDER_STREAM_CALL", raising=False)
    fast = CallStream(method)
    assert isinstance(fast._call, SingleThreadedCall), "fell back to the public API"
    fast_answers = [fast.ask(bytes([i]) * i, 5.0) for i in range(1, 20)]
    fast.close()
    assert not streams._internals_failed
    monkeypatch.setenv("LADDER_STREAM_CALL", "threaded")
    public = CallStream(method)
    assert isinstance(public._call, ThreadedCall)
    assert [public.ask(bytes([i]) * i, 5.0) for i in range(1, 20)] == fast_answers
    public.close()


LEGAL = [wire.action_to_proto({"kind": "STASH"}), wire.action_to_proto({"kind": "DONE"})]


def _act(observation: dict[str, Any], legal: list[dict[str, Any]]) -> int:
    return int(observation["round"]) % 2


def _answers(server: BotServer) -> list[str]:
    with grpc.insecure_channel(server.address) as ch:
        stream = CallStream(bot_pb2_grpc.BotStub(ch).ActStream)
        kinds = []
        for r in range(12):
            request = bot_pb2.DecisionRequest(game_id="g", seat=0, legal_actions=LEGAL)
            request.observation.round = r
            kinds.append(stream.ask(request, 5.0).action.WhichOneof("kind"))
        stream.close(grace_s=1.0)
    return kinds


def test_the_sdk_serves_game_streams_on_this_grpcios_internals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DIGDOWN_STREAM_SERVER", raising=False)
    server = BotServer(BotService(_act), "127.0.0.1:0")
    server.start()
    try:
        state = server.server._state  # type: ignore[attr-defined]
        assert [n for n in SERVER_STATE if not hasattr(state, n)] == []
        assert hasattr(state.server, "request_registered_call")
        assert server.streams is not None, "fell back to grpcio's thread-pool server"
        fast = _answers(server)
    finally:
        server.stop(0.5)
    monkeypatch.setenv("DIGDOWN_STREAM_SERVER", "threaded")
    public_server = BotServer(BotService(_act), "127.0.0.1:0")
    public_server.start()
    try:
        assert public_server.streams is None
        assert _answers(public_server) == fast == ["stash", "done"] * 6
    finally:
        public_server.stop(0.5)
