"""Build the Ladder gRPC server (``manage.py grpcserver`` is the front door).

One ``grpc.aio`` server on an asyncio loop (a thread of its own) serves every
method on one port: connected bots' Play streams as coroutines (no thread per
stream: ``play_call``), every other method as the synchronous code it is, on a
bounded thread pool behind the same interceptors as before (``aio_bridge``):
``CallLimit`` (``max_workers`` running, ``max_concurrent_rpcs`` admitted, more get
RESOURCE_EXHAUSTED), ``CallGuard``, metrics. Message limits are sized for the
largest upload; health (``""`` and ``digdown.v1.Ladder``) and reflection answer
on the loop, outside the limits; a graceful stop: streams closed (bots reconnect
elsewhere), NOT_SERVING, then running calls get ``grace`` seconds.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
from collections.abc import Sequence
from concurrent import futures
from typing import Any

import grpc
from django.conf import settings
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from digdown import serving
from digdown.v1 import ladder_pb2, ladder_pb2_grpc
from ladder.grpc import play_call
from ladder.grpc.aio_bridge import SyncBridge, offloader
from ladder.grpc.auth import CallGuard
from ladder.grpc.play import PlayHub
from ladder.grpc.relay import RelayServer
from ladder.grpc.servicer import LadderServicer
from telemetry.rpc import MetricsInterceptor

log = logging.getLogger("ladder.grpc")

SERVICE_NAME = ladder_pb2.DESCRIPTOR.services_by_name["Ladder"].full_name
START_TIMEOUT_S = 30.0  # building, starting or stopping the server on its loop


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
        self.services = (SERVICE_NAME,)
        admitted = max(max_workers, max_concurrent_rpcs)
        self.limit = serving.CallLimit(admitted=admitted, running=max_workers)
        # A thread for every admitted call, plus a few for what Play streams do on
        # threads (admission, forgetting a record) so they never wait behind calls.
        self.pool = futures.ThreadPoolExecutor(
            max_workers=admitted + serving.RESERVED_THREADS, thread_name_prefix="ladder-rpc"
        )
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self.loop.run_forever, name="ladder-aio", daemon=True
        )
        self._thread.start()
        guard = CallGuard(rate=rate)
        offload = offloader(self.pool, self.loop)
        # Play's handler is built once: each call holds what it is handed for hours.
        play = functools.cache(functools.partial(play_call.play_handler, guard, self.hub, offload))
        bridge = SyncBridge(
            [MetricsInterceptor(), self.limit, *outer_interceptors, guard],
            self.pool,
            self.loop,
            own=lambda method, handler: play(handler) if method == play_call.METHOD else None,
        )
        # An upload may be as large as the upload limit plus framing.
        options = serving.server_options(
            settings.LADDER_UPLOAD_MAX_BYTES + 64 * 1024, 4 * 1024 * 1024
        )
        try:
            self.server, self.health, self.port = self._on_loop(
                self._build(listen, bridge, options, reflection_enabled)
            )
        except BaseException:
            self._close_loop()
            raise
        self.address = serving.bound_address(listen, self.port)

    def _on_loop(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(START_TIMEOUT_S)

    async def _build(
        self, listen: str, bridge: SyncBridge, options: list[tuple[str, Any]], reflection: bool
    ) -> tuple[grpc.aio.Server, Any, int]:
        server = grpc.aio.server(interceptors=[bridge], options=options)
        ladder_pb2_grpc.add_LadderServicer_to_server(LadderServicer(), server)
        checks = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(checks, server)
        if reflection:
            from grpc_reflection.v1alpha import reflection as reflection_service

            names = (*self.services, health.SERVICE_NAME, reflection_service.SERVICE_NAME)
            reflection_service.enable_server_reflection(names, server)
        return server, checks, serving.bind(server, listen)  # type: ignore[arg-type]

    async def _start(self) -> None:
        await self.server.start()
        for name in ("", *self.services):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    async def _stop(self, grace_s: float) -> None:
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace_s)

    def start(self) -> None:
        self.relay.start()
        self.hub.start()
        self._on_loop(self._start())
        log.info(
            "ladder gRPC listening on %s (relay for workers on %s)",
            self.address,
            self.hub.relay_address,
        )

    def stop(self, grace_s: float) -> None:
        # Streams first: their bots reconnect to another replica while this one drains.
        self.hub.stop()
        self.relay.stop(min(grace_s, 1.0))
        try:
            asyncio.run_coroutine_threadsafe(self._stop(grace_s), self.loop).result(
                grace_s + START_TIMEOUT_S
            )
        finally:
            self._close_loop()
        log.info("stopped")

    def _close_loop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(START_TIMEOUT_S)
        self.pool.shutdown(wait=False, cancel_futures=True)
