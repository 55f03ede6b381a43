"""Build and run the Ladder gRPC server (``manage.py grpcserver`` is the front door).

Shaped like the engine server: a bounded thread pool, ``maximum_concurrent_rpcs``
(more calls get RESOURCE_EXHAUSTED from grpcio itself), message limits sized for
the largest upload, health (``""`` and ``digdown.v1.Ladder``) and reflection,
and a graceful stop: NOT_SERVING first, then running calls get ``grace`` seconds.
"""

from __future__ import annotations

import logging
from concurrent import futures
from typing import Any

import grpc
from django.conf import settings
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from ladder.grpc.auth import CallGuard
from ladder.grpc.servicer import LadderServicer
from protos.digdown.v1 import ladder_pb2, ladder_pb2_grpc

log = logging.getLogger("ladder.grpc")

SERVICE_NAME = ladder_pb2.DESCRIPTOR.services_by_name["Ladder"].full_name


def server_options() -> list[tuple[str, Any]]:
    """Channel arguments: an upload may be as large as the upload limit plus framing."""
    receive = settings.LADDER_UPLOAD_MAX_BYTES + 64 * 1024
    return [
        ("grpc.so_reuseport", 0),  # a busy port must fail loudly, not be shared (G5)
        ("grpc.max_receive_message_length", receive),
        ("grpc.max_send_message_length", 4 * 1024 * 1024),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
    ]


class LadderServer:
    """A bound (not yet started) Ladder server with health and reflection."""

    def __init__(
        self,
        listen: str,
        *,
        max_workers: int = 8,
        max_concurrent_rpcs: int = 64,
        rate: str | None = None,
        reflection_enabled: bool = True,
    ) -> None:
        self.server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="ladder-rpc"),
            interceptors=[CallGuard(rate=rate)],
            maximum_concurrent_rpcs=max_concurrent_rpcs,
            options=server_options(),
        )
        ladder_pb2_grpc.add_LadderServicer_to_server(LadderServicer(), self.server)
        self.health = health.HealthServicer(
            experimental_non_blocking=True,
            experimental_thread_pool=futures.ThreadPoolExecutor(max_workers=1),
        )
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        if reflection_enabled:
            names = (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME)
            reflection.enable_server_reflection(names, self.server)
        host = listen.rsplit(":", 1)[0]
        try:
            self.port = self.server.add_insecure_port(listen)
        except RuntimeError:  # newer grpcio raises on a failed bind, older returned 0
            self.port = 0
        if self.port == 0:
            raise OSError(f"cannot listen on {listen} (address in use or invalid)")
        self.address = f"{host}:{self.port}"

    def start(self) -> None:
        self.server.start()
        for name in ("", SERVICE_NAME):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("ladder gRPC listening on %s", self.address)

    def stop(self, grace_s: float) -> None:
        """NOT_SERVING first so balancers drain, then let running calls finish."""
        self.health.enter_graceful_shutdown()
        self.server.stop(grace_s).wait()
        log.info("stopped")
