"""One shape for every gRPC server of the project: engine, bots and the Ladder service.

Each of them needs the same things, and each trap here was met once already:
a bounded thread pool; ``grpc.so_reuseport`` off and a checked bind (grpc
otherwise shares a busy port or reports a failed bind as port 0, pitfall G5);
health (``""`` and the served services) and reflection; a port file written
atomically, so whoever started the process on port 0 finds it; and a graceful
stop on SIGTERM/SIGINT: NOT_SERVING first so balancers and health checks drain,
then running calls get ``grace`` seconds.

This module knows no servicer: callers register theirs through ``register``.
It imports neither ``ladder`` nor ``bots`` nor Django, so all three can use it.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

log = logging.getLogger("digdown.serving")

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class StatusError(Exception):
    """An error a servicer reports as a gRPC status with a human message (engine, ladder)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def configure_logging(level: str | int = "INFO") -> None:
    """Log to stderr in the one format every process of the project uses."""
    if isinstance(level, str):
        level = level.upper()
    logging.basicConfig(level=level, format=LOG_FORMAT, stream=sys.stderr)


def server_options(
    max_receive_bytes: int, max_send_bytes: int | None = None
) -> list[tuple[str, Any]]:
    """Channel arguments of a server (pitfalls G2, G4, G5)."""
    return [
        ("grpc.so_reuseport", 0),  # a busy port must fail loudly, not be shared
        ("grpc.max_receive_message_length", max_receive_bytes),
        ("grpc.max_send_message_length", max_send_bytes or max_receive_bytes),
        # Accept client keepalive pings down to every 10 s instead of GOAWAY-ing them.
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
    ]


def bind(server: grpc.Server, listen: str) -> int:
    """Bind ``listen`` (``host:port`` or ``unix:/path``); the port, or OSError if it failed."""
    try:
        port = server.add_insecure_port(listen)
    except RuntimeError:  # newer grpcio raises on a failed bind ...
        port = 0
    if port == 0:  # ... older ones returned port 0 (pitfall G5)
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
    reflection lists. Subclasses add their own state and logging around
    ``start`` and ``stop``.
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
    ) -> None:
        self.services = tuple(services)
        self.server = grpc.server(
            futures.ThreadPoolExecutor(
                max_workers=max_workers, thread_name_prefix=thread_name_prefix
            ),
            interceptors=list(interceptors),
            maximum_concurrent_rpcs=max_concurrent_rpcs,
            options=server_options(max_receive_bytes, max_send_bytes),
        )
        register(self.server)
        # Non-blocking health on its own thread: a probe still answers while every
        # RPC thread is busy, which is when a balancer most needs the answer.
        self.health = health.HealthServicer(
            experimental_non_blocking=True,
            experimental_thread_pool=futures.ThreadPoolExecutor(max_workers=1),
        )
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        if reflection_enabled:
            names = (*self.services, health.SERVICE_NAME, reflection.SERVICE_NAME)
            reflection.enable_server_reflection(names, self.server)
        self.port = bind(self.server, listen)
        self.address = bound_address(listen, self.port)

    def start(self) -> None:
        """Start serving and report SERVING for ``""`` and every service."""
        self.server.start()
        for name in ("", *self.services):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    def stop(self, grace_s: float) -> None:
        """NOT_SERVING first so balancers drain, then let running calls finish for ``grace_s``."""
        self.health.enter_graceful_shutdown()
        self.server.stop(grace_s).wait()


def serve_until_signalled(
    server: GrpcServer,
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
