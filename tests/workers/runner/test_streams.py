"""CallStream's two ways of driving a stream behave alike: the calling thread on the
call's own queue (a plain grpcio channel) and grpcio's blocking stream API (any
other multi-callable, e.g. an intercepted channel). Real server on loopback."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from tests.support import loopback
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


ENDED = threading.Event()  # the "Last" stream's handler saw the end of its requests
TOGETHER = threading.Barrier(3, timeout=10)  # three "Unary" calls in the server at once


def _echo_until_the_end(
    requests: Iterator[bytes], context: grpc.ServicerContext
) -> Iterator[bytes]:
    yield from requests
    ENDED.set()


def _unary(request: bytes, context: grpc.ServicerContext) -> bytes:
    if request == b"fail":
        context.abort(grpc.StatusCode.FAILED_PRECONDITION, "asked to fail")
    if request == b"stall":
        threading.Event().wait(5)
    if request.startswith(b"together"):
        TOGETHER.wait()  # broken (an error) unless all three are in at once
    return request


@pytest.fixture(scope="module")
def address() -> Iterator[str]:
    server, address = loopback.serve(
        "test.Echo",
        {
            "Stream": grpc.stream_stream_rpc_method_handler(_echo),
            "Last": grpc.stream_stream_rpc_method_handler(_echo_until_the_end),
            "Unary": grpc.unary_unary_rpc_method_handler(_unary),
        },
        workers=8,
    )
    yield address
    server.stop(0)


class _Passthrough(grpc.StreamStreamClientInterceptor):
    def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return continuation(details, requests)


class _PassthroughUnary(grpc.UnaryUnaryClientInterceptor):
    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(details, request)


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


def test_the_last_request_half_closes_the_stream_with_it(open_stream: Any, address: str) -> None:
    """The engine's GetReplay: the other side learns that no request follows with the
    request itself, and ends its side without waiting for a close."""
    ENDED.clear()
    channel = grpc.insecure_channel(address)
    try:
        stream = open_stream()  # which way the fixture drives it, for the same channel kind
        last = CallStream(channel.stream_stream("/test.Echo/Last"))
        if isinstance(stream._call, ThreadedCall):
            last = CallStream(
                grpc.intercept_channel(channel, _Passthrough()).stream_stream("/test.Echo/Last")
            )
        assert type(last._call) is type(stream._call)
        assert last.ask(b"a", 5.0) == b"a"
        assert last.ask(b"b", 5.0, last=True) == b"b" and last.half_closed
        assert ENDED.wait(10), "the handler never saw the end of the requests"
        last.close(grace_s=5.0)
    finally:
        channel.close()


@pytest.mark.parametrize("way", ["internals", "threaded", "intercepted"])
def test_begun_unary_calls_are_answered_side_by_side(
    address: str, way: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """begin_unary starts the call at once and its result waits for the reply, raising
    the call's error as a blocking call does; the three calls are in the server at the
    same time (its barrier breaks otherwise), whichever way they are driven."""
    channel = grpc.insecure_channel(address)
    if way == "threaded":
        monkeypatch.setenv("LADDER_STREAM_CALL", "threaded")
    target = (
        grpc.intercept_channel(channel, _PassthroughUnary()) if way == "intercepted" else channel
    )
    try:
        method = target.unary_unary("/test.Echo/Unary")
        TOGETHER.reset()
        pending = [streams.begin_unary(method, b"together%d" % i, 10.0) for i in range(3)]
        assert [wait() for wait in pending] == [b"together0", b"together1", b"together2"]
        failed = streams.begin_unary(method, b"fail", 5.0)
        with pytest.raises(grpc.RpcError) as err:
            failed()
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        late = streams.begin_unary(method, b"stall", 0.2)
        with pytest.raises(grpc.RpcError) as err:
            late()
        assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    finally:
        channel.close()


# A stream whose wait is interrupted by an exception from a signal handler, as Celery's
# soft time limit interrupts a pool process; run apart, with a bound, since what this
# guards against is a wait that never ends.
INTERRUPTED = """
import signal, time
import grpc
from tests.support import loopback
from workers.runner.streams import CallStream

def slow(requests, context):
    for request in requests:
        time.sleep(5)
        yield request

server, address = loopback.serve("t.Slow", {"S": grpc.stream_stream_rpc_method_handler(slow)})
channel = grpc.insecure_channel(address)
stream = CallStream(channel.stream_stream("/t.Slow/S"))

class SoftLimit(Exception):
    pass

def interrupt(*_):
    raise SoftLimit()

signal.signal(signal.SIGALRM, interrupt)
signal.setitimer(signal.ITIMER_REAL, 0.3)
try:
    stream.ask(b"x", 10.0)
except SoftLimit:
    print("interrupted", flush=True)
stream.close(grace_s=2.0)  # the match's cleanup, as a finally block runs it
print("closed", flush=True)
server.stop(None)
"""


def test_a_wait_interrupted_by_a_signal_handler_still_closes() -> None:
    """grpcio ends a call whose wait a signal handler's exception interrupted and frees
    its queue; closing the stream afterwards must not wait on that queue for ever."""
    import subprocess
    import sys

    from workers.server_process import ROOT, default_env

    run = subprocess.run(
        [sys.executable, "-c", INTERRUPTED],
        cwd=ROOT,
        env=default_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.stdout.split() == ["interrupted", "closed"], run.stderr[-2000:]
