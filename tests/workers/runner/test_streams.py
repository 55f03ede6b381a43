"""CallStream's two ways of driving a stream behave alike: the calling thread on the
call's own queue (a plain grpcio channel) and grpcio's blocking stream API (any
other multi-callable, e.g. an intercepted channel). Real server on loopback."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from workers.runner import streams
from workers.runner.streams import CallStream, SingleThreadedCall, ThreadedCall

METHOD = "/test.Echo/Stream"


def _echo(requests: Iterator[bytes], context: grpc.ServicerContext) -> Iterator[bytes]:
    """Echo; b"fail" ends the stream with an error status, b"stall" never answers,
    b"end" ends it OK."""
    for request in requests:
        if request == b"fail":
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, "asked to fail")
        if request == b"stall":
            threading.Event().wait(5)
            return
        if request == b"end":
            return
        yield request


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    server = grpc.server(futures.ThreadPoolExecutor(8))
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                "test.Echo", {"Stream": grpc.stream_stream_rpc_method_handler(_echo)}
            ),
        )
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(0)


class _Passthrough(grpc.StreamStreamClientInterceptor):
    def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return continuation(details, requests)


@pytest.fixture(params=["single-threaded", "threaded"])
def open_stream(request: pytest.FixtureRequest, address: str) -> Iterator[Any]:
    channel = grpc.insecure_channel(address)
    if request.param == "threaded":
        channel = grpc.intercept_channel(channel, _Passthrough())
    kind = SingleThreadedCall if request.param == "single-threaded" else ThreadedCall
    opened: list[CallStream] = []

    def make() -> CallStream:
        stream = CallStream(channel.stream_stream(METHOD))
        assert isinstance(stream._call, kind)
        opened.append(stream)
        return stream

    yield make
    for stream in opened:
        stream.close()
    channel.close()


def test_exchanges_in_order_and_a_graceful_end(open_stream: Any) -> None:
    stream = open_stream()
    assert [stream.ask(b"%d" % i, 5.0) for i in range(20)] == [b"%d" % i for i in range(20)]
    assert stream.exchanges == 20
    stream.close(grace_s=1.0)
    with pytest.raises(grpc.RpcError) as err:
        stream.ask(b"x", 5.0)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_an_error_status_is_raised_and_breaks_the_stream(open_stream: Any) -> None:
    stream = open_stream()
    assert stream.ask(b"a", 5.0) == b"a"
    with pytest.raises(grpc.RpcError) as err:
        stream.ask(b"fail", 5.0)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "asked to fail" in err.value.details()
    assert stream.broken


def test_the_other_side_ending_the_stream_is_unavailable(open_stream: Any) -> None:
    stream = open_stream()
    with pytest.raises(grpc.RpcError) as err:
        stream.ask(b"end", 5.0)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_a_stalled_exchange_is_a_deadline_and_the_next_stream_works(open_stream: Any) -> None:
    stream = open_stream()
    with pytest.raises(grpc.RpcError) as err:
        stream.ask(b"stall", 0.2)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert stream.broken
    assert open_stream().ask(b"again", 5.0) == b"again"


def test_grpcios_public_api_when_asked_or_when_its_internals_are_missing(
    address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The single-threaded call rests on grpcio's internals: an operator can turn it off,
    and a grpcio without them gets the blocking stream API, which works the same."""
    channel = grpc.insecure_channel(address)
    try:
        method = channel.stream_stream(METHOD)
        assert isinstance(CallStream(method)._call, SingleThreadedCall)
        monkeypatch.setenv("LADDER_STREAM_CALL", "threaded")
        asked = CallStream(method)
        assert isinstance(asked._call, ThreadedCall) and asked.ask(b"x", 5.0) == b"x"
        asked.close()
        monkeypatch.delenv("LADDER_STREAM_CALL")
        monkeypatch.setattr(streams, "cygrpc", None)
        missing = CallStream(method)
        assert isinstance(missing._call, ThreadedCall) and missing.ask(b"y", 5.0) == b"y"
        missing.close()
    finally:
        channel.close()
