"""Game streams served by one thread each, driving the call on its own completion queue.

grpcio's thread-pool server hands every message of a stream over twice: its
polling thread takes each event off the server's one completion queue and wakes
the stream's handler thread, once for the request and once more when the reply
was sent (the handler waits for that before it reads on). A game stream (a
bot's ``ActStream``, the engine's ``Play``) is one request -> one reply after
another, so here the stream's own thread does it all: the call is requested on a
completion queue of its own, and each reply goes out in one batch with the
receipt of the next request, so the thread wakes once per message. The same
idea as the runner's ``SingleThreadedCall``, on the server side; a bare echo
costs the server about 40% less CPU per message this way (grpcio 1.85).

What the thread-pool server gave the handler is kept: the servicer method is
the same (a generator over the requests, with a context offering ``peer``,
``abort``, ``is_active``, ``cancel``, ``code``, ``invocation_metadata``), the
interceptors (call limit, metrics) wrap it the same way, an exception becomes
UNKNOWN as in grpcio, ``abort`` ends the stream with its status; health,
reflection and every other method stay on the thread-pool server, and so does
its graceful stop (a stream is a call of the same server: refused once
stopping, cancelled after the grace).

This drives grpcio's internals (``cygrpc`` calls and the server's state), as the
runner's streams do; ``supported`` says whether this grpcio has them, and
``DIGDOWN_STREAM_SERVER=threaded`` (or a grpcio without them) leaves the game
streams to the thread-pool server. What the internals buy (the engine's and the bots'
CPU per streamed decision) is recorded in docs/benchmark-report.md, "Private library
internals kept"; tests/workers/runner/test_grpc_internals_canary.py fails the day a
grpcio release moves them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from typing import Any

import grpc

try:  # grpcio's internals; without them the thread-pool server serves the streams
    from grpc import _common
    from grpc._cython import cygrpc  # type: ignore[attr-defined]  # no stubs: compiled
except ImportError:  # pragma: no cover - a grpcio that moved them
    _common = cygrpc = None  # type: ignore[assignment]

log = logging.getLogger("digdown.serving")

_NO_FLAGS = 0
_CLOSE, _EXCHANGE, _STATUS = "close", "exchange", "status"


def wanted() -> bool:
    """Whether game streams should be served here (not by the thread-pool server)."""
    return os.environ.get("DIGDOWN_STREAM_SERVER", "single-threaded") != "threaded"


def supported(server: grpc.Server) -> bool:
    state = getattr(server, "_state", None)
    return (
        cygrpc is not None
        and state is not None
        and all(
            hasattr(state, name)
            for name in ("registered_method_handlers", "server", "completion_queue", "lock")
        )
        and hasattr(state.server, "request_registered_call")
    )


class _Details(grpc.HandlerCallDetails):
    def __init__(self, method: str) -> None:
        self.method = method
        self.invocation_metadata = ()


class _Aborted(Exception):
    """Raised by `StreamContext.abort` (as grpcio's context raises): the status is set."""


class _Cancelled(grpc.RpcError):
    """The stream was cancelled or failed while the handler read or wrote on it."""


class StreamContext:
    """The servicer context of one game stream (what the project's handlers use)."""

    def __init__(self, call: Any, metadata: Sequence[tuple[str, Any]]) -> None:
        self._call = call
        self._metadata = tuple(metadata or ())
        self._code: grpc.StatusCode | None = None
        self._details = ""
        self.cancelled = False
        self.finished = False

    def peer(self) -> str:
        peer: bytes | str = self._call.peer()
        return peer.decode("utf-8", "replace") if isinstance(peer, bytes) else peer

    def invocation_metadata(self) -> tuple[tuple[str, Any], ...]:
        return self._metadata

    def time_remaining(self) -> float | None:
        return None  # game streams carry no deadline: each exchange has the runner's own

    def is_active(self) -> bool:
        return not (self.cancelled or self.finished)

    def cancel(self) -> None:
        """Cancel the stream (another thread may: the idle-stream reaper)."""
        self.cancelled = True
        self._call.cancel(
            _common.STATUS_CODE_TO_CYGRPC_STATUS_CODE[grpc.StatusCode.CANCELLED],
            b"Cancelled by the server",
        )

    def code(self) -> grpc.StatusCode | None:
        if self.cancelled and self._code is None:
            return grpc.StatusCode.CANCELLED
        return self._code

    def details(self) -> str:
        return self._details

    def set_code(self, code: grpc.StatusCode) -> None:
        self._code = code

    def set_details(self, details: str) -> None:
        self._details = details

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        self._code, self._details = code, details
        raise _Aborted(details)


class _Driver:
    """One stream's call, its completion queue and its batches."""

    def __init__(self, call: Any, queue: Any, context: StreamContext) -> None:
        self.call, self.queue, self.context = call, queue, context
        self.pending = 0  # batches started and not yet come back
        self.receiving = False  # a batch with a ReceiveMessage is out
        self.metadata_sent = False
        self.failed = False  # a send or receive failed: the call is over

    def start(self, operations: tuple[Any, ...], tag: str) -> None:
        """Start a batch; one grpc core refused (a misuse, not a failed call: batches on a
        cancelled call are accepted and come back failed) never comes back, and ends
        the call."""
        if self.call.start_server_batch(operations, tag) in (0, None):
            self.pending += 1
        else:  # pragma: no cover - only a handler misusing the stream gets here
            self.failed = True
            log.error("grpc core refused a batch of a game stream: %s", operations)

    def next(self) -> Any:
        event = self.queue.poll()
        self.pending -= 1
        ops = event.batch_operations if event.tag is _CLOSE else None
        if ops and ops[0].cancelled():
            self.context.cancelled = True
        return event

    def exchange(self) -> bytes | None:
        """Wait for the batch with the ReceiveMessage; the request's bytes, or None."""
        while True:
            event = self.next()
            if event.tag is _EXCHANGE:
                break
        self.receiving = False
        if not event.success:
            self.failed = True
            return None
        # The batch's own ReceiveMessageOperation (its last) holds the request.
        message: bytes | None = event.batch_operations[-1].message()
        return message

    def metadata(self) -> tuple[Any, ...]:
        if self.metadata_sent:
            return ()
        self.metadata_sent = True
        return (cygrpc.SendInitialMetadataOperation(None, _NO_FLAGS),)

    def receive(self, reply: bytes | None = None) -> None:
        """Start a batch: the reply (if any) out, the next request in."""
        ops: tuple[Any, ...] = self.metadata()
        if reply is not None:
            ops += (cygrpc.SendMessageOperation(reply, _NO_FLAGS),)
        self.start((*ops, cygrpc.ReceiveMessageOperation(_NO_FLAGS)), _EXCHANGE)
        self.receiving = True

    def finish(self, code: grpc.StatusCode, details: str) -> None:
        """Send the status (unless the call is over already) and take every batch back."""
        if not (self.context.cancelled or self.failed):
            status = _common.STATUS_CODE_TO_CYGRPC_STATUS_CODE[code]
            ops = (
                *self.metadata(),
                cygrpc.SendStatusFromServerOperation(
                    None, status, details.encode("utf-8", "replace"), _NO_FLAGS
                ),
            )
            self.start(ops, _STATUS)
        elif not self.context.cancelled:
            self.context.cancel()
        self.context.finished = True
        while self.pending:
            self.next()


class _Requests:
    """The request iterator a handler reads: each request is the reply batch's receipt."""

    def __init__(self, driver: _Driver, deserialize: Callable[[bytes], Any] | None) -> None:
        self._driver = driver
        self._deserialize = deserialize

    def __iter__(self) -> _Requests:
        return self

    def __next__(self) -> Any:
        d = self._driver
        if d.failed or d.context.cancelled:
            raise _Cancelled()
        if not d.receiving:
            d.receive()
        raw = d.exchange()
        if raw is None:
            if d.failed or d.context.cancelled:
                raise _Cancelled()
            raise StopIteration  # the client half-closed
        if self._deserialize is None:
            return raw
        try:
            return self._deserialize(raw)
        except Exception:
            d.context.abort(grpc.StatusCode.INTERNAL, "Exception deserializing request!")


class StreamServer:
    """Serves ``methods`` (full names) of a started grpcio server on threads of their own.

    Built before the server starts (it takes the methods' handlers out of the
    server's registered ones, wrapped by ``interceptors`` as grpcio would wrap
    them); ``start`` once the server started. ``threads`` streams are served at
    once (more wait for a thread): the call limit's streams and a reserve, so that
    a stream refused by the limit is refused at once.
    """

    def __init__(
        self,
        server: grpc.Server,
        methods: Sequence[str],
        interceptors: Sequence[grpc.ServerInterceptor],
        *,
        threads: int,
    ) -> None:
        self._pool = futures.ThreadPoolExecutor(max_workers=threads, thread_name_prefix="stream")
        self._state: Any = server._state  # type: ignore[attr-defined]
        self._handlers: dict[str, grpc.RpcMethodHandler] = {}
        for method in methods:
            handler = self._state.registered_method_handlers.pop(method, None)
            if handler is None or handler.stream_stream is None:
                if handler is not None:
                    self._state.registered_method_handlers[method] = handler
                continue
            for interceptor in reversed(interceptors):
                inner: grpc.RpcMethodHandler = handler

                def found(_details: Any, inner: grpc.RpcMethodHandler = inner) -> Any:
                    return inner

                wrapped = interceptor.intercept_service(found, _Details(method))
                handler = wrapped if wrapped is not None else handler
            self._handlers[method] = handler

    @property
    def methods(self) -> list[str]:
        return list(self._handlers)

    def start(self) -> None:
        for method in self._handlers:
            self._request(method)

    def _request(self, method: str) -> None:
        """Ask the server for the next call of ``method``, on a completion queue of its own.

        grpcio's polling thread gets the news (the tag is called with the event)."""
        queue = cygrpc.CompletionQueue()

        def accepted(event: Any) -> tuple[None, tuple[()]]:
            # Runs on grpcio's polling thread: nothing may escape into its loop.
            try:
                if self._state.stage.name == "STARTED":
                    self._request(method)
                if event.success and event.call is not None:
                    self._pool.submit(self._serve, method, event, queue)
            except Exception:  # pragma: no cover - a server stopping meanwhile
                log.exception("could not take a %s stream", method)
            return None, ()

        with self._state.lock:
            if self._state.stage.name == "STARTED":
                self._state.server.request_registered_call(
                    queue, self._state.completion_queue, method, accepted
                )

    def _serve(self, method: str, event: Any, queue: Any) -> None:
        handler = self._handlers[method]
        call = event.call
        context = StreamContext(call, event.invocation_metadata)
        driver = _Driver(call, queue, context)
        driver.start((cygrpc.ReceiveCloseOnServerOperation(_NO_FLAGS),), _CLOSE)
        serialize = handler.response_serializer
        code, details = grpc.StatusCode.OK, ""
        replies: Iterator[Any] | None = None
        behavior: Any = handler.stream_stream  # (requests, context) -> replies
        try:
            replies = iter(behavior(_Requests(driver, handler.request_deserializer), context))
            for reply in replies:
                if driver.failed or context.cancelled:
                    break
                data = serialize(reply) if serialize is not None else reply
                driver.receive(data)  # the reply out, the next request in: one wake-up
            if context._code is not None:
                code, details = context._code, context._details
        except _Aborted:
            code = context._code or grpc.StatusCode.UNKNOWN
            details = context._details
        except _Cancelled:
            code, details = grpc.StatusCode.CANCELLED, "cancelled"
        except Exception as exc:
            log.exception("Exception iterating responses: %s", exc)
            code, details = grpc.StatusCode.UNKNOWN, f"Exception iterating responses: {exc}"
        finally:
            if replies is not None and hasattr(replies, "close"):
                try:
                    replies.close()  # the handler's own cleanup (finally blocks) runs now
                except Exception:  # pragma: no cover - a handler failing in its cleanup
                    log.exception("a game stream's handler failed while closing")
            try:
                driver.finish(code, details)
            finally:
                queue.shutdown()
                while True:  # the queue's own shutdown event
                    if queue.poll().completion_type == cygrpc.CompletionType.queue_shutdown:
                        break
