"""Build the Ladder gRPC server (``manage.py grpcserver`` is the front door).

Shaped like the engine server (``digdown.serving``): a bounded thread pool,
``maximum_concurrent_rpcs`` (more calls get RESOURCE_EXHAUSTED from grpcio
itself), message limits sized for the largest upload, health (``""`` and
``digdown.v1.Ladder``) and reflection, and a graceful stop: NOT_SERVING first,
then running calls get ``grace`` seconds.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import grpc
from django.conf import settings

from digdown import serving
from digdown.v1 import ladder_pb2, ladder_pb2_grpc
from ladder.grpc.auth import CallGuard
from ladder.grpc.play import PlayHub
from ladder.grpc.relay import RelayServer
from ladder.grpc.servicer import LadderServicer
from telemetry.rpc import MetricsInterceptor

log = logging.getLogger("ladder.grpc")

SERVICE_NAME = ladder_pb2.DESCRIPTOR.services_by_name["Ladder"].full_name


class LadderServer(serving.GrpcServer):
    """A bound (not yet started) Ladder server with health and reflection."""

    def __init__(
        self,
        listen: str,
        *,
        max_workers: int = 8,
        max_concurrent_rpcs: int = 64,
        rate: str | None = None,
        reflection_enabled: bool = True,
        outer_interceptors: Sequence[grpc.ServerInterceptor] = (),
        relay_listen: str | None = None,
    ) -> None:
        """``outer_interceptors`` run around ``CallGuard`` (tests count queries with one).

        The process also serves the internal relay (``relay_listen``) through which
        workers reach the Play streams it holds (``ladder.grpc.play``).
        """
        self.relay = RelayServer(relay_listen or settings.LADDER_RELAY_LISTEN, PlayHub(""))
        self.hub: PlayHub = self.relay.hub
        self.hub.relay_address = settings.LADDER_RELAY_ADVERTISE or self.relay.address
        streams = settings.LADDER_CONNECT_STREAMS_PER_PROCESS
        super().__init__(
            listen,
            services=[SERVICE_NAME],
            register=lambda server: ladder_pb2_grpc.add_LadderServicer_to_server(
                LadderServicer(self.hub), server
            ),
            # Each Play stream parks one pool thread (its writer) for its whole life; the
            # hub refuses streams past its own limit first, with its own message.
            max_streams=streams + 8,
            streamed=[f"/{SERVICE_NAME}/Play"],
            max_workers=max_workers,
            max_concurrent_rpcs=max_concurrent_rpcs,
            # An upload may be as large as the upload limit plus framing.
            max_receive_bytes=settings.LADDER_UPLOAD_MAX_BYTES + 64 * 1024,
            max_send_bytes=4 * 1024 * 1024,
            interceptors=[*outer_interceptors, CallGuard(rate=rate)],
            observers=[MetricsInterceptor()],
            thread_name_prefix="ladder-rpc",
            reflection_enabled=reflection_enabled,
        )

    def start(self) -> None:
        self.relay.start()
        self.hub.start()
        super().start()
        log.info(
            "ladder gRPC listening on %s (relay for workers on %s)",
            self.address,
            self.hub.relay_address,
        )

    def stop(self, grace_s: float) -> None:
        # Streams first: their bots reconnect to another replica while this one drains.
        self.hub.stop()
        self.relay.stop(min(grace_s, 1.0))
        super().stop(grace_s)
        log.info("stopped")
