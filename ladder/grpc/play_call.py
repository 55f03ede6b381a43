"""Ladder.Play served as a coroutine on the server's asyncio loop: no thread per stream.

What ``CallGuard`` and ``MetricsInterceptor`` do around a synchronous call is done
here around the stream: its request id (log lines, trailing metadata), the caller
authenticated and throttled on a pool thread (database and cache), any failure
turned into a status with its message, and the call counted and timed. Messages
are sized before parsing (``play_codec``). The stream itself is the hub's
(``PlayHub.open`` and ``serve``).
"""

from __future__ import annotations

import time
from typing import Any

import grpc
from django.conf import settings

from digdown.v1 import ladder_pb2
from ladder.common import request_id
from ladder.grpc.aio_bridge import Offload
from ladder.grpc.auth import CallGuard, _metadata
from ladder.grpc.play import PlayHub
from ladder.grpc.play_codec import play_decoder
from telemetry.rpc import HANDLED, SECONDS, STARTED

SERVICE = ladder_pb2.DESCRIPTOR.services_by_name["Ladder"].full_name
METHOD = f"/{SERVICE}/Play"


def play_handler(
    guard: CallGuard, hub: PlayHub, offload: Offload, handler: grpc.RpcMethodHandler
) -> grpc.RpcMethodHandler:
    """The handler of ``Ladder.Play``: ``handler`` (the generated one) as a coroutine."""

    async def play(_requests: Any, context: grpc.aio.ServicerContext) -> None:
        STARTED.labels(SERVICE, "Play").inc()
        started = time.perf_counter()
        code = grpc.StatusCode.OK
        rid = request_id.accept(_metadata(context.invocation_metadata(), "x-request-id"))
        context.set_trailing_metadata((("x-request-id", rid),))
        try:
            with request_id.bound(rid):
                try:
                    caller = await offload(guard.admit_stream, "Play", context)
                    # Messages are read with ``context.read``: iterating ``_requests`` would
                    # make an async generator that grpc.aio keeps for the stream's life.
                    opened = await hub.open(
                        context.read, context, user=caller.user, token_id=caller.token_id,
                        offload=offload,
                    )  # fmt: skip
                    del caller  # the stream keeps no model instance (``PlayHub.open``)
                    await hub.serve(opened, context, offload)
                except Exception as exc:
                    code, message = CallGuard.failure_status("Play", exc)
                    await context.abort(code, message)
        except BaseException:
            if code == grpc.StatusCode.OK:
                code = grpc.StatusCode.CANCELLED
            raise
        finally:
            HANDLED.labels(SERVICE, "Play", code.name).inc()
            SECONDS.labels(SERVICE, "Play").observe(time.perf_counter() - started)

    return grpc.stream_stream_rpc_method_handler(
        play,
        request_deserializer=play_decoder(settings.LADDER_CONNECT_MAX_MESSAGE_BYTES),
        response_serializer=handler.response_serializer,
    )
