"""A bidirectional gRPC stream used as a sequence of request -> reply exchanges.

Protocol 2 sends a game's decisions over one stream per seat (bot.proto
``ActStream``) and its steps over one stream to the engine (engine.proto
``Play``): the same request and reply messages as the unary calls, one reply per
request, in order, without a call's set-up per decision. What unary calls had
for free is kept here:

- a deadline per exchange: grpcio's blocking stream has one deadline for the
  whole call, so a process-wide ``DeadlineKeeper`` thread cancels the stream when
  an exchange runs past its own, and the caller sees DEADLINE_EXCEEDED exactly
  as from a unary call;
- a stream that failed once (deadline, error status, closed) is not used again:
  a late reply must never be read as the answer to a later request; the caller
  opens a new stream for the next exchange.

How the exchanges run: grpcio's blocking stream API hands every request to a
thread of its own that reads the request iterator, and every reply to the
channel's polling thread, which wakes the caller; a decision's two exchanges
cost the runner six thread wake-ups and more CPU than two unary calls. A
``CallStream`` on a plain grpcio channel instead drives the call the way
grpcio's blocking unary calls do: the call has a completion queue of its own,
each exchange is one batch (send the request, receive the reply) and the
calling thread waits on that queue itself (``SingleThreadedCall``; grpcio's
``SingleThreadedUnaryStream`` option does the same for unary-stream calls).
grpc.aio was measured too, driven from the match thread and natively: both
cost more per exchange than the blocking API. A multi-callable that is not
grpcio's plain one (an intercepted channel, a test double) gets the blocking
API (``ThreadedCall``), and so does every stream when grpcio's internals are not
what ``SingleThreadedCall`` expects (a grpcio release that moved them: logged
once) or when ``LADDER_STREAM_CALL=threaded`` asks for grpcio's public API only.
What the internals buy (a streamed exchange at about half the blocking API's cost) is
recorded in docs/benchmark-report.md, "Private library internals kept";
tests/workers/runner/test_grpc_internals_canary.py fails the day a grpcio release moves
them (the fallback itself would be silent but for a log line).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import grpc

from workers.runner.net import TransportError

try:  # grpcio's internals, which SingleThreadedCall drives; without them, its public API
    from grpc import _channel, _common
    from grpc._cython import cygrpc  # type: ignore[attr-defined]  # no stubs: compiled
except ImportError:  # pragma: no cover - a grpcio that moved them
    _channel = _common = cygrpc = None  # type: ignore[assignment]

log = logging.getLogger("workers.runner")

_END = object()  # ends the request iterator: the stream's half-close


class Timer:
    """One armed deadline: ``disarm`` when the exchange is over; fires at most once.

    ``lock`` serializes its disarm with its expiry: the keeper's one lock for all its
    timers (a lock per timer cost an allocation per exchange; neither holds it long).
    """

    __slots__ = ("_fire", "_lock", "armed", "fired")

    def __init__(self, fire: Callable[[], None], lock: threading.Lock) -> None:
        self._fire = fire
        self._lock = lock
        self.armed = True
        self.fired = False

    def disarm(self) -> None:
        with self._lock:
            self.armed = False

    def expire(self) -> None:
        with self._lock:
            if not self.armed:
                return
            self.armed, self.fired = False, True
            self._fire()


class DeadlineKeeper:
    """One thread per process that fires the deadlines of stream exchanges.

    Arming costs a lock and a heap push; the thread is woken only when a deadline
    earlier than the one it sleeps towards is armed (rare: deadlines are about
    equally long), and drops disarmed ones when it wakes. Started lazily and again
    in a forked child (grpcio and fork do not mix, nor do threads and fork).
    """

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = threading.Lock()  # taken directly by arm (no Condition frames)
        self._cond = threading.Condition(self._lock)
        self._timers = threading.Lock()  # every timer's (Timer)
        self._heap: list[tuple[float, int, Timer]] = []
        self._wake_at = math.inf
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, timeout_s: float, fire: Callable[[], None]) -> Timer:
        timer = Timer(fire, self._timers)
        when = time.monotonic() + timeout_s
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="stream-deadlines", daemon=True
                )
                self._thread.start()
            heapq.heappush(self._heap, (when, next(self._seq), timer))
            if when < self._wake_at:
                self._cond.notify()
        return timer

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                heap = self._heap
                while heap and (not heap[0][2].armed or heap[0][0] <= now):
                    _, _, timer = heapq.heappop(heap)
                    timer.expire()  # a no-op when disarmed
                self._wake_at = heap[0][0] if heap else math.inf
                self._cond.wait(None if not heap else self._wake_at - now)


KEEPER = DeadlineKeeper()


class ThreadedCall:
    """A stream through grpcio's blocking API: requests on a queue its thread reads."""

    def __init__(self, method: grpc.StreamStreamMultiCallable) -> None:
        self._requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._call: Any = method(iter(self._requests.get, _END))
        self._half_closed = False

    def exchange(self, request: Any, *, last: bool = False) -> Any:
        """Send ``request``, return the next reply; ``grpc.RpcError`` when the call failed.
        ``last``: half-close with the request (no more come)."""
        self._requests.put(request)
        if last:
            self.half_close()
        try:
            return next(self._call)
        except StopIteration:
            raise TransportError(
                grpc.StatusCode.UNAVAILABLE, "the stream was closed by the other side"
            ) from None

    def cancel(self) -> None:
        self._call.cancel()

    def half_close(self) -> None:
        """Tell the other side no more requests come (``end`` then waits for its end)."""
        if not self._half_closed:
            self._half_closed = True
            self._requests.put(_END)

    def end(self, grace_s: float) -> None:
        """Half-close; drop replies until the other side ends the call (bounded by a timer
        that cancels it); then cancel whatever is left."""
        self.half_close()
        if grace_s > 0:
            timer = KEEPER.arm(grace_s, self._call.cancel)
            try:
                for _ in self._call:
                    pass
            except grpc.RpcError:
                pass
            finally:
                timer.disarm()
        self._call.cancel()


# Tags of a SingleThreadedCall's batches.
_STATUS, _EXCHANGE, _OTHER = "status", "exchange", "other"
_NO_FLAGS = 0
_CANCELLED = (
    _common.STATUS_CODE_TO_CYGRPC_STATUS_CODE.get(grpc.StatusCode.CANCELLED)
    if _common is not None
    else None
)


class SingleThreadedCall:
    """A stream driven by the calling thread on the call's own completion queue.

    grpcio's public API has no such stream-stream call, so this uses what its blocking
    unary calls use (``cygrpc`` segregated calls, from the multi-callable's channel);
    ``supported`` says whether a multi-callable offers them. The call's batches are
    counted: once every one came back the call is over and its queue is gone, so
    ``_next`` is never called again (nor can ``operate`` start a batch: it says so).
    ``cancel`` may come from another thread (the deadline keeper): grpcio's call
    serializes it with the events.
    """

    def __init__(self, method: Any) -> None:
        self._serialize = method._request_serializer or (lambda m: m)
        self._deserialize = method._response_deserializer or (lambda b: b)
        operations = (
            ((cygrpc.SendInitialMetadataOperation(None, _NO_FLAGS),), _OTHER),
            ((cygrpc.ReceiveInitialMetadataOperation(_NO_FLAGS),), _OTHER),
            ((cygrpc.ReceiveStatusOnClientOperation(_NO_FLAGS),), _STATUS),
        )
        self._call = method._channel.segregated_call(
            cygrpc.PropagationConstants.GRPC_PROPAGATE_DEFAULTS,
            method._method,
            None,
            None,  # no deadline for the call: each exchange has its own (KEEPER)
            None,
            None,
            operations,
            method._context,
            method._registered_call_handle,
        )
        self._pending = len(operations)  # batches started and not yet come back
        self.status: tuple[grpc.StatusCode, str] | None = None
        self._half_closed = False

    @staticmethod
    def supported(method: Any) -> bool:
        if cygrpc is None or _CANCELLED is None:
            return False
        channel = getattr(method, "_channel", None)
        return (
            isinstance(channel, cygrpc.Channel)
            and hasattr(channel, "segregated_call")
            and all(
                hasattr(method, name)
                for name in (
                    "_method",
                    "_request_serializer",
                    "_response_deserializer",
                    "_context",
                    "_registered_call_handle",
                )
            )
        )

    def _next(self) -> Any:
        """The next event of the call's queue (blocks without the GIL); notes the status."""
        try:
            event = self._call.next_event()
        except BaseException:
            # An exception from a signal handler while waiting (Celery's soft time limit,
            # a test's timeout): grpcio has ended the call and freed its queue, so nothing
            # more comes back, and waiting for it would never end.
            self._pending = 0
            raise
        self._pending -= 1
        if event.tag is _STATUS:
            op = event.batch_operations[0]
            code = _common.CYGRPC_STATUS_CODE_TO_STATUS_CODE.get(op.code(), grpc.StatusCode.UNKNOWN)
            self.status = (code, op.details() or "")
        return event

    def _start(self, operations: tuple[Any, ...], tag: str) -> bool:
        if self._pending and self._call.operate(operations, tag):
            self._pending += 1
            return True
        return False

    def _failure(self) -> TransportError:
        """The error of a call that ended (its status, once it came)."""
        while self.status is None and self._pending:
            self._next()
        code, details = self.status or (grpc.StatusCode.UNKNOWN, "the call ended")
        if code is grpc.StatusCode.OK:
            return TransportError(
                grpc.StatusCode.UNAVAILABLE, "the stream was closed by the other side"
            )
        return TransportError(code, details)

    def exchange(self, request: Any, *, last: bool = False) -> Any:
        """Send ``request``, return the next reply; ``grpc.RpcError`` when the call failed.
        ``last``: half-close in the same batch (no more requests come): the other side
        learns it with the request, not a round trip later."""
        data = self._serialize(request)
        send: tuple[Any, ...] = (cygrpc.SendMessageOperation(data, _NO_FLAGS),)
        if last and not self._half_closed:
            send += (cygrpc.SendCloseFromClientOperation(_NO_FLAGS),)
        if not self._start((*send, cygrpc.ReceiveMessageOperation(_NO_FLAGS)), _EXCHANGE):
            raise self._failure()
        self._half_closed = self._half_closed or last
        while True:
            event = self._next()
            if event.tag is _EXCHANGE:
                break
        raw = event.batch_operations[-1].message()  # the batch's ReceiveMessageOperation (last)
        if raw is None:
            raise self._failure()
        try:
            return self._deserialize(raw)
        except Exception:  # what grpcio's call does with a reply it cannot decode
            self.cancel()
            raise TransportError(
                grpc.StatusCode.INTERNAL, "Exception deserializing response!"
            ) from None

    def cancel(self) -> None:
        self._call.cancel(_CANCELLED, "Locally cancelled by application!")

    def half_close(self) -> bool:
        """Tell the other side no more requests come (``end`` then waits for its end);
        False when the call is over."""
        if not self._half_closed:
            self._half_closed = self._start(
                (cygrpc.SendCloseFromClientOperation(_NO_FLAGS),), _OTHER
            )
        return self._half_closed

    def end(self, grace_s: float) -> None:
        """Half-close; drop replies until the other side ends the call (bounded by a timer
        that cancels it); then cancel what is left and take every batch back."""
        if grace_s > 0 and self.half_close():
            timer = KEEPER.arm(grace_s, self.cancel)
            try:
                while self.status is None and self._start(
                    (cygrpc.ReceiveMessageOperation(_NO_FLAGS),), _EXCHANGE
                ):
                    while True:
                        event = self._next()
                        if event.tag is _EXCHANGE:
                            break
                    if all(
                        op.message() is None
                        for op in event.batch_operations
                        if op.type() == cygrpc.OperationType.receive_message
                    ):
                        break  # the other side's half of the stream is over
                while self.status is None and self._pending:
                    self._next()
            finally:
                timer.disarm()
        if self.status is None:
            self.cancel()
        while self._pending:
            self._next()


class CallStream:
    """One open stream of ``method``; ``ask`` sends a request and waits for its reply."""

    def __init__(self, method: grpc.StreamStreamMultiCallable) -> None:
        self._call = _open(method)
        self.broken = False
        self.half_closed = False  # no more requests may be sent
        self.exchanges = 0  # replies received

    def ask(self, request: Any, timeout_s: float, *, last: bool = False) -> Any:
        """The reply to ``request`` within ``timeout_s``; raises ``grpc.RpcError``.

        DEADLINE_EXCEEDED when no reply came in time, UNAVAILABLE when the other side
        closed the stream, its status when it ended the stream with one. After any
        failure the stream is ``broken`` (cancelled): open a new one. ``last``: the
        stream is half-closed with the request (``close`` then waits for its end).
        """
        if self.broken:
            raise TransportError(grpc.StatusCode.UNAVAILABLE, "the stream is closed")
        timer = KEEPER.arm(timeout_s, self._call.cancel)
        self.half_closed = self.half_closed or last
        try:
            reply = self._call.exchange(request, last=last)
        except grpc.RpcError:
            self.close()
            if timer.fired:
                raise TransportError(
                    grpc.StatusCode.DEADLINE_EXCEEDED, f"no reply within {timeout_s:.3f} s"
                ) from None
            raise
        finally:
            timer.disarm()
        if timer.fired:  # the reply came, but the stream was cancelled a moment after
            self.broken = True
        self.exchanges += 1
        return reply

    def half_close(self) -> None:
        """Start ending the stream without waiting: the other side learns that no more
        requests come and ends its side meanwhile; ``close`` then waits for that. Streams
        half-closed together end side by side, on one thread: their waits overlap."""
        if not self.broken:
            self.half_closed = True
            self._call.half_close()

    def close(self, grace_s: float = 0.0) -> None:
        """End the stream: half-close, wait up to ``grace_s`` for the other side to end it
        too (so the call ends OK, not CANCELLED, in its logs and metrics; replies still
        coming are dropped), then cancel whatever is left."""
        if self.broken:
            grace_s = 0.0
        self.broken = True
        self._call.end(grace_s)


class _SegregatedUnary:
    """A unary call started now on a completion queue of its own, answered by ``result``
    on the thread that waits for it: what grpcio's blocking call does, cut in two."""

    def __init__(self, method: Any, request: Any, timeout_s: float, wait_for_ready: bool) -> None:
        self._deserialize = method._response_deserializer
        state, operations, deadline, error = method._prepare(
            request, timeout_s, None, wait_for_ready, None
        )
        self._error: grpc.RpcError | None = error
        self._state = state
        if state is None:
            return
        state.rpc_start_time = time.perf_counter()
        state.method = _common.decode(method._method)
        state.target = _common.decode(method._target)
        self._call = method._channel.segregated_call(
            cygrpc.PropagationConstants.GRPC_PROPAGATE_DEFAULTS,
            method._method,
            None,
            _channel._determine_deadline(deadline),
            None,
            None,
            ((operations, None),),
            method._context,
            method._registered_call_handle,
        )

    @staticmethod
    def supported(method: Any) -> bool:
        return (
            _channel is not None
            and isinstance(method, _channel._UnaryUnaryMultiCallable)
            and isinstance(getattr(method, "_channel", None), cygrpc.Channel)
            and all(
                hasattr(_channel, name)
                for name in ("_determine_deadline", "_handle_event", "_end_unary_response_blocking")
            )
            and all(
                hasattr(method, name)
                for name in (
                    "_prepare",
                    "_method",
                    "_target",
                    "_context",
                    "_registered_call_handle",
                )
            )
        )

    def result(self) -> Any:
        if self._error is not None:
            raise self._error
        event = self._call.next_event()
        _channel._handle_event(event, self._state, self._deserialize)
        return _channel._end_unary_response_blocking(self._state, self._call, False, None)


def begin_unary(
    method: Any,
    request: Any,
    timeout_s: float,
    *,
    wait_for_ready: bool = False,
) -> Callable[[], Any]:
    """Start a unary call now; the returned function waits for its reply (raising the
    call's ``grpc.RpcError`` as a blocking call would).

    The calls of a match's seats (their handshakes) are started one after the other on
    the match's thread and answered side by side, with no thread per call: a pool's
    hand-over cost each call two thread wake-ups, and on a shared machine the pool's
    threads queued for a CPU. A multi-callable that is not grpcio's plain one, a
    grpcio whose internals moved, or ``LADDER_STREAM_CALL=threaded`` gets its public
    ``future`` (the channel's own thread).
    """
    global _unary_internals_failed
    wanted = os.environ.get("LADDER_STREAM_CALL", "single-threaded") != "threaded"
    if wanted and not _unary_internals_failed and _SegregatedUnary.supported(method):
        try:
            return _SegregatedUnary(method, request, timeout_s, wait_for_ready).result
        except (AttributeError, TypeError) as exc:  # internals of another grpcio
            _unary_internals_failed = True
            log.warning(
                "grpcio %s: single-threaded unary calls unavailable (%s: %s); using futures",
                grpc.__version__, type(exc).__name__, exc,
            )  # fmt: skip
    future = method.future(request, timeout=timeout_s, wait_for_ready=wait_for_ready)
    return future.result


_unary_internals_failed = False


_internals_failed = False  # grpcio refused SingleThreadedCall once: its public API from then on


def _open(method: grpc.StreamStreamMultiCallable) -> SingleThreadedCall | ThreadedCall:
    """The cheapest way this grpcio offers to drive a stream of ``method``."""
    global _internals_failed
    wanted = os.environ.get("LADDER_STREAM_CALL", "single-threaded") != "threaded"
    if wanted and not _internals_failed and SingleThreadedCall.supported(method):
        try:
            return SingleThreadedCall(method)
        except (AttributeError, TypeError, ValueError) as exc:  # internals of another grpcio
            _internals_failed = True
            log.warning(
                "grpcio %s: single-threaded stream calls unavailable (%s: %s); "
                "using its blocking stream API",
                grpc.__version__, type(exc).__name__, exc,
            )  # fmt: skip
    return ThreadedCall(method)
