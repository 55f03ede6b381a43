"""One shape for every gRPC server of the project: engine, bots and the Ladder service.

Each of them needs the same things, and each trap here was met once already:
a bounded number of concurrent calls (`CallLimit`) that leaves health and
reflection out, so a saturated server still answers its probes instead of
being restarted by its orchestrator for being busy;
``grpc.so_reuseport`` off and a checked bind (grpc otherwise shares a busy
port or reports a failed bind as port 0); health (``""`` and the
served services) and reflection; a port file written atomically, so whoever
started the process on port 0 finds it; and a graceful stop on SIGTERM/SIGINT:
NOT_SERVING first so balancers and health checks drain, then running calls get
``grace`` seconds.

This module knows no servicer: callers register theirs through ``register``.
It imports neither ``ladder`` nor ``bots`` nor Django, so all three can use it.
"""

from __future__ import annotations

import logging
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from digdown import stream_server
from digdown.stream_server import StreamServer

log = logging.getLogger("digdown.serving")

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
HEALTH_PREFIX = f"/{health.SERVICE_NAME}/"
REFLECTION_PREFIXES = ("/grpc.reflection.v1alpha.ServerReflection/", "/grpc.reflection.v1.")
# Threads kept for health checks, reflection and quick refusals beyond the call limit.
RESERVED_THREADS = 4
# Reflection streams at once: a client holding streams open must not take the reserve.
REFLECTION_STREAMS = 2


class StatusError(Exception):
    """An error a servicer reports as a gRPC status with a human message (engine, ladder)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def configure_logging(level: str | int = "INFO") -> None:
    """Log to stderr in the one format every process of the project uses.

    A process whose framework configured logging already (Django's ``LOGGING``)
    keeps its handlers and format; only the level is set.
    """
    if isinstance(level, str):
        level = level.upper()
    logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)
    logging.getLogger().setLevel(level)


def server_options(
    max_receive_bytes: int, max_send_bytes: int | None = None
) -> list[tuple[str, Any]]:
    """Channel arguments of a server: message size limits, keepalive that tolerates the
    clients' pings (no GOAWAY mid-match), no port sharing."""
    return [
        ("grpc.so_reuseport", 0),  # a busy port must fail loudly, not be shared
        ("grpc.max_receive_message_length", max_receive_bytes),
        ("grpc.max_send_message_length", max_send_bytes or max_receive_bytes),
        # Accept client keepalive pings down to every 10 s instead of GOAWAY-ing them.
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
    ]


def peer_host(peer: str) -> str:
    """The client's address without its port: 'ipv4:10.0.0.5:5555' -> 'ipv4:10.0.0.5'.

    The port changes with every connection, so quotas and throttles key on this.
    """
    if peer.startswith("ipv6:"):
        return peer.rsplit("]", 1)[0] + "]" if "]" in peer else peer
    return peer.rsplit(":", 1)[0] if peer.count(":") >= 2 else peer


Around = Callable[[grpc.ServicerContext], AbstractContextManager[Any]]


def wrap_handler(handler: grpc.RpcMethodHandler, around: Around) -> grpc.RpcMethodHandler:
    """The same handler with every call run inside ``around(context)``, whatever its arity.

    Streamed responses are generators that grpcio iterates on the call's own pool
    thread, so ``around`` covers the whole stream, not just its start.
    """

    def unary(behavior: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        def call(request: Any, context: grpc.ServicerContext) -> Any:
            with around(context):
                return behavior(request, context)

        return call

    def streamed(behavior: Callable[[Any, Any], Iterator[Any]]) -> Callable[[Any, Any], Any]:
        def call(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            with around(context):
                yield from behavior(request, context)

        return call

    kinds = (
        ("unary_unary", grpc.unary_unary_rpc_method_handler, unary),
        ("unary_stream", grpc.unary_stream_rpc_method_handler, streamed),
        ("stream_unary", grpc.stream_unary_rpc_method_handler, unary),
        ("stream_stream", grpc.stream_stream_rpc_method_handler, streamed),
    )
    for attr, make, wrap in kinds:
        behavior = getattr(handler, attr)
        if behavior is not None:
            return make(
                wrap(behavior),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
    return handler


class HandlerInterceptor(grpc.ServerInterceptor):
    """An interceptor that decides per method what its handler becomes (`wrap_handler`)."""

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        return self.wrap(handler_call_details.method, handler)

    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        """The handler to serve ``method`` (its full name, ``/package.Service/Method``) with."""
        raise NotImplementedError


class CallLimit(HandlerInterceptor):
    """At most ``admitted`` service calls at once, ``running`` of them executing; health exempt.

    grpcio's own ``maximum_concurrent_rpcs`` counts every call, health checks
    included, before it even knows the method: a server busy with legitimate
    work then fails its probes and gets restarted for it. Here the limit is
    taken on the call's thread, only by the served services: a call beyond
    ``admitted`` is refused at once with RESOURCE_EXHAUSTED; an admitted one
    waits (within its deadline) for one of ``running`` slots. The thread pool
    has a thread for every admitted call plus `RESERVED_THREADS`, so health
    checks, reflection (at most `REFLECTION_STREAMS` streams) and refusals
    always find a thread.

    A *game stream* (one of ``streamed``: a bot's ActStream, the engine's Play)
    lives as long as a game and is idle between its messages, so it is counted
    apart: at most ``streams`` of them at once (more are refused with
    RESOURCE_EXHAUSTED, and the client falls back to unary calls), each with a
    thread of its own, and its handler takes one of the ``running`` slots per
    message (`running_slot`), not for the stream's life, so idle streams never
    starve unary calls.
    """

    def __init__(
        self, *, admitted: int, running: int, streams: int = 0, streamed: Sequence[str] = ()
    ) -> None:
        self.admitted, self.running = admitted, min(running, admitted)
        self.streams = streams
        self.streamed = frozenset(streamed)
        self._admitted = threading.BoundedSemaphore(admitted)
        # The running slots as tokens in a queue, not a semaphore: one is taken and given
        # back around every message of every game stream, and SimpleQueue's get and put
        # are C (threading.Semaphore's acquire and release are Python around a
        # Condition: about 1.2 µs a message against 0.1).
        self._running: queue.SimpleQueue[None] = queue.SimpleQueue()
        for _ in range(self.running):
            self._running.put(None)
        self._reflection = threading.BoundedSemaphore(REFLECTION_STREAMS)
        self._streams = threading.BoundedSemaphore(max(1, streams))
        # Open game streams -> when each last got a message (monotonic).
        self._open: dict[grpc.ServicerContext, float] = {}

    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        if method.startswith(HEALTH_PREFIX):
            return handler
        if method.startswith(REFLECTION_PREFIXES):
            return wrap_handler(handler, self._reflection_slot)
        if method in self.streamed:
            return wrap_handler(handler, self._stream_slot)
        return wrap_handler(handler, self._service_slot)

    @contextmanager
    def _stream_slot(self, context: grpc.ServicerContext) -> Iterator[None]:
        if not self.streams:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "no game streams served here")
        busy = f"server busy: {self.streams} game streams open, the limit; use unary calls"
        with _slot(self._streams, context, busy):
            self._open[context] = time.monotonic()
            try:
                yield
            finally:
                self._open.pop(context, None)

    def cancel_idle_streams(self, idle_s: float) -> int:
        """Cancel the game streams that got no message for longer than ``idle_s`` (a
        stream left open holds a thread and a slot); how many were cancelled."""
        cutoff = time.monotonic() - idle_s
        idle = [ctx for ctx, last in list(self._open.items()) if last < cutoff]
        for ctx in idle:
            log.info("cancelling a game stream idle for more than %.0f s", idle_s)
            ctx.cancel()
        return len(idle)

    def running_slot(self, context: grpc.ServicerContext) -> AbstractContextManager[None]:
        """One of the ``running`` slots for one message of a game stream (or a call)."""
        return _RunningSlot(self, context)

    def _reflection_slot(self, context: grpc.ServicerContext) -> AbstractContextManager[None]:
        return _slot(
            self._reflection,
            context,
            f"{REFLECTION_STREAMS} reflection streams are open, the limit; retry later",
        )

    @contextmanager
    def _service_slot(self, context: grpc.ServicerContext) -> Iterator[None]:
        busy = f"server busy: {self.admitted} calls in progress, the limit; retry later"
        with _slot(self._admitted, context, busy), self.running_slot(context):
            yield


class _RunningSlot:
    """`CallLimit.running_slot`: a plain class rather than a generator context manager,
    as it is taken around every message of every game stream."""

    __slots__ = ("_context", "_limit")

    def __init__(self, limit: CallLimit, context: grpc.ServicerContext) -> None:
        self._limit, self._context = limit, context

    def __enter__(self) -> None:
        limit, context = self._limit, self._context
        if context in limit._open:
            limit._open[context] = time.monotonic()  # the stream is in use
        # Wake up now and then: a caller that went away stops waiting.
        while True:
            try:
                limit._running.get(timeout=0.25)
                return
            except queue.Empty:
                if not context.is_active():
                    context.abort(grpc.StatusCode.CANCELLED, "the caller went away while queued")

    def __exit__(self, *exc: object) -> None:
        self._limit._running.put(None)


@contextmanager
def _slot(
    semaphore: threading.BoundedSemaphore, context: grpc.ServicerContext, refusal: str
) -> Iterator[None]:
    """Hold one of ``semaphore``'s slots for the block, or refuse at once (RESOURCE_EXHAUSTED)."""
    if not semaphore.acquire(blocking=False):
        context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, refusal)
    try:
        yield
    finally:
        semaphore.release()


def bind(server: grpc.Server, listen: str) -> int:
    """Bind ``listen`` (``host:port`` or ``unix:/path``); the port, or OSError if it failed."""
    try:
        port = server.add_insecure_port(listen)
    except RuntimeError:  # newer grpcio raises on a failed bind ...
        port = 0
    if port == 0:  # ... older ones returned port 0
        raise OSError(f"cannot listen on {listen} (address in use or invalid)")
    return port


def bound_address(listen: str, port: int) -> str:
    """The address clients dial: ``listen`` with the port actually bound (port 0 resolved)."""
    if listen.startswith("unix:"):
        return listen
    return f"{listen.rsplit(':', 1)[0]}:{port}"


def write_port_file(path: Path | str, port: int) -> None:
    """Write ``port`` atomically: a reader never sees an empty or half-written file."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"{port}\n")
    tmp.replace(path)


class GrpcServer:
    """A bound (not yet started) grpc server with health and, optionally, reflection.

    ``register`` adds the servicers; ``services`` are their full names, which
    health reports SERVING (besides the overall ``""``) once started and
    reflection lists. ``max_concurrent_rpcs`` service calls are admitted at
    once and ``max_workers`` of them execute (`CallLimit`); health and
    reflection are outside both limits; ``max_streams`` game streams (methods
    ``streamed``) are counted apart (`CallLimit`), and with ``stream_idle_s`` a
    stream that gets no message for that long is cancelled. Subclasses add their own
    state and logging around ``start`` and ``stop``.
    """

    def __init__(
        self,
        listen: str,
        *,
        services: Sequence[str],
        register: Callable[[grpc.Server], None],
        max_workers: int,
        max_concurrent_rpcs: int | None,
        max_receive_bytes: int = 4 * 1024 * 1024,
        max_send_bytes: int | None = None,
        interceptors: Sequence[grpc.ServerInterceptor] = (),
        thread_name_prefix: str = "rpc",
        reflection_enabled: bool = True,
        max_streams: int = 0,
        streamed: Sequence[str] = (),
        observers: Sequence[grpc.ServerInterceptor] = (),
        stream_idle_s: float = 0.0,
        exchange_streams: bool = False,
    ) -> None:
        """``observers`` go outside the call limit (metrics see the calls it refuses);
        ``interceptors`` inside it. With ``exchange_streams`` the ``streamed`` methods are
        request -> reply exchanges (one reply per request, in order: a game's ``Play``
        or ``ActStream``) and are served on threads of their own (`StreamServer`)."""
        self.services = tuple(services)
        admitted = max(max_workers, max_concurrent_rpcs or max_workers)
        self.limit = CallLimit(
            admitted=admitted, running=max_workers, streams=max_streams, streamed=streamed
        )
        self.server = grpc.server(
            futures.ThreadPoolExecutor(
                max_workers=admitted + max_streams + RESERVED_THREADS,
                thread_name_prefix=thread_name_prefix,
            ),
            # The limit goes before the interceptors, so it also covers what they do.
            interceptors=[*observers, self.limit, *interceptors],
            options=server_options(max_receive_bytes, max_send_bytes),
        )
        register(self.server)
        # Exchange streams on threads of their own, each driving its call
        # (stream_server.py); the interceptors wrap them as grpcio would.
        self.streams: StreamServer | None = None
        if (
            exchange_streams
            and streamed
            and stream_server.wanted()
            and stream_server.supported(self.server)
        ):
            self.streams = StreamServer(
                self.server,
                streamed,
                [*observers, self.limit, *interceptors],
                threads=max_streams + RESERVED_THREADS,
            )
        # Health is outside CallLimit, so a probe answers while every call slot is
        # busy, which is when a balancer most needs the answer; Watch streams run
        # non-blocking on a thread of their own instead of holding a pool thread.
        self.health = health.HealthServicer(
            experimental_non_blocking=True,
            experimental_thread_pool=futures.ThreadPoolExecutor(max_workers=1),
        )
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        if reflection_enabled:
            # Imported here: bots never serve reflection, so the SDK does not need the
            # package (the engine and the ladder, which do, depend on it themselves).
            from grpc_reflection.v1alpha import reflection

            names = (*self.services, health.SERVICE_NAME, reflection.SERVICE_NAME)
            reflection.enable_server_reflection(names, self.server)
        self.port = bind(self.server, listen)
        self.address = bound_address(listen, self.port)
        self.stream_idle_s = stream_idle_s
        self._stopped = threading.Event()

    def start(self) -> None:
        """Start serving and report SERVING for ``""`` and every service."""
        self.server.start()
        if self.streams is not None:
            self.streams.start()
        for name in ("", *self.services):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        if self.stream_idle_s > 0 and self.limit.streams:
            threading.Thread(target=self._reap_streams, name="idle-streams", daemon=True).start()

    def _reap_streams(self) -> None:
        period = max(0.05, min(30.0, self.stream_idle_s / 4))
        while not self._stopped.wait(period):
            self.limit.cancel_idle_streams(self.stream_idle_s)

    def stop(self, grace_s: float) -> None:
        """NOT_SERVING first so balancers drain, then let running calls finish for ``grace_s``."""
        self._stopped.set()
        self.health.enter_graceful_shutdown()
        self.server.stop(grace_s).wait()


class Servable(Protocol):
    """What `serve_until_signalled` runs: a bound server (``GrpcServer`` or alike)."""

    port: int

    def start(self) -> None: ...

    def stop(self, grace_s: float) -> None: ...


def serve_until_signalled(
    server: Servable,
    *,
    grace_s: float,
    port_file: Path | str | None = None,
    install_signals: bool = True,
    stop_requested: threading.Event | None = None,
) -> float:
    """Start ``server``, write its port file, serve until SIGTERM/SIGINT, stop gracefully.

    Returns the seconds the stop took. ``stop_requested`` lets a caller that
    cannot install signal handlers (not the main thread) stop the server itself.
    """
    stop_requested = stop_requested or threading.Event()
    if install_signals:

        def on_signal(signum: int, _frame: Any) -> None:
            log.info("received %s", signal.Signals(signum).name)
            stop_requested.set()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    server.start()
    if port_file is not None:
        write_port_file(port_file, server.port)
    # Wake up now and then: a bare Event.wait() would delay signal handling.
    while not stop_requested.wait(0.5):
        pass
    started = time.monotonic()
    server.stop(grace_s)
    took = time.monotonic() - started
    log.info("exit after %.2f s shutdown", took)
    return took
