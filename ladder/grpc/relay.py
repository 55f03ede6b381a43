"""digdown.v1.Relay: how a worker reaches a Play stream this process holds.

Served on an internal address of its own (``LADDER_RELAY_LISTEN``, advertised in
each stream's presence record), never on the authors' port. Each call names a
stream; this process forwards the request on it and answers with the bot's
reply, or with a status and its typed reason (``digdown.v1.FaultReason`` in the
trailing metadata, ``digdown.fault_reasons``) the worker judges blame by:
STREAM_CLOSED when the bot's stream is gone, SERVER_STOPPING when this process is
stopping, RELAY_LOST for a stream opened before this process started (the worker
sends when it was opened, ``x-stream-since``): a previous process at this address
held it and was restarted, which is the ladder's doing, never proof the bot left.
Calls without the shared relay key are refused.

Why a dialled relay and not Redis between worker and stream: a decision then
costs one loopback (or LAN) gRPC call more than a dialled bot, instead of two
Redis round trips plus the wake-ups of the process blocked on them;
``bench/connect_bench.py`` measures both (docs/connected-bots.md has figures).
"""

from __future__ import annotations

import hmac
import logging
import time
from typing import Any, NoReturn

import grpc

from digdown import fault_reasons, serving
from digdown.v1 import faults_pb2, ladder_pb2, relay_pb2, relay_pb2_grpc
from ladder.bots import presence
from ladder.grpc.play import RELAY_LOST, STREAM_CLOSED, PlayHub, StreamGone

log = logging.getLogger("ladder.grpc.relay")

SERVICE_NAME = relay_pb2.DESCRIPTOR.services_by_name["Relay"].full_name
MAX_WAIT_S = 120.0  # no decision waits longer (decision + a whole bank)


def _abort(
    context: grpc.ServicerContext, code: grpc.StatusCode, message: str, reason: int
) -> NoReturn:
    """End the call with ``code`` and the typed ``reason`` the worker judges blame by."""
    context.set_trailing_metadata(fault_reasons.metadata(reason))
    context.abort(code, message)


class RelayServicer(relay_pb2_grpc.RelayServicer):
    def __init__(self, hub: PlayHub) -> None:
        self.hub = hub
        self.key = presence.relay_key()
        self.started_at = time.time()

    def _held_before_me(self, metadata: dict[str, Any]) -> bool:
        """The stream was opened before this process started: it was never held here."""
        try:
            return float(metadata.get(presence.STREAM_SINCE_KEY, "")) < self.started_at
        except ValueError:
            return False

    def _stream(self, stream_id: str, context: grpc.ServicerContext) -> Any:
        metadata = dict(context.invocation_metadata())
        sent = metadata.get("x-relay-key", "")
        if not hmac.compare_digest(str(sent), self.key):
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "relay calls need the relay key")
        if self.hub._stopping.is_set():
            _abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                f"{RELAY_LOST}: this server is stopping",
                faults_pb2.FAULT_REASON_SERVER_STOPPING,
            )
        stream = self.hub.get(stream_id)
        if stream is None and self._held_before_me(metadata):
            _abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                f"{RELAY_LOST}: stream {stream_id[:40]} was held by this address's previous"
                " process (restarted)",
                faults_pb2.FAULT_REASON_RELAY_LOST,
            )
        if stream is None:
            _abort(
                context,
                grpc.StatusCode.UNAVAILABLE,
                f"{STREAM_CLOSED}: no stream {stream_id[:40]} here",
                faults_pb2.FAULT_REASON_STREAM_CLOSED,
            )
        return stream

    def _forward(
        self,
        kind: str,
        request: relay_pb2.RelayHandshake | relay_pb2.RelayDecision,
        context: grpc.ServicerContext,
    ) -> Any:
        """Send ``request`` (a RelayHandshake or RelayDecision) on its stream as a ``kind``
        message and wait for the bot's answer (a status when there is none)."""
        stream = self._stream(request.stream_id, context)
        fields: dict[str, Any] = {
            "match_id": request.match_id, "seat": request.seat, "request": request.request
        }  # fmt: skip
        if kind == "handshake":
            fields["timeout_ms"] = request.timeout_ms
        message_cls = ladder_pb2.PlayHandshake if kind == "handshake" else ladder_pb2.PlayDecision

        def build(correlation: str) -> Any:
            inner: Any = message_cls(correlation_id=correlation, **fields)
            return ladder_pb2.PlayServerMessage(**{kind: inner})

        timeout = min(max(request.timeout_ms, 1) / 1000, MAX_WAIT_S)
        remaining = context.time_remaining()
        if remaining is not None:
            timeout = min(timeout, remaining)
        try:
            return stream.request(kind, build, timeout)
        except StreamGone as exc:
            _abort(context, exc.code, exc.message, exc.reason)

    def Handshake(
        self, request: relay_pb2.RelayHandshake, context: grpc.ServicerContext
    ) -> relay_pb2.RelayAnswer:
        answer = self._forward("handshake", request, context)
        return relay_pb2.RelayAnswer(handshake=answer.reply)

    def Act(
        self, request: relay_pb2.RelayDecision, context: grpc.ServicerContext
    ) -> relay_pb2.RelayAnswer:
        answer = self._forward("decision", request, context)
        if answer.error:
            _abort(
                context,
                grpc.StatusCode.INTERNAL,
                f"bot error: {answer.error[:500]}",
                faults_pb2.FAULT_REASON_BOT_ERROR,
            )
        return relay_pb2.RelayAnswer(decision=answer.reply.SerializeToString())

    def MatchEnd(
        self, request: relay_pb2.RelayMatchEnd, context: grpc.ServicerContext
    ) -> relay_pb2.RelayAnswer:
        stream = self._stream(request.stream_id, context)
        stream.send(ladder_pb2.PlayServerMessage(match_end=request.end))
        return relay_pb2.RelayAnswer(open=True)

    def Status(
        self, request: relay_pb2.RelayStatusRequest, context: grpc.ServicerContext
    ) -> relay_pb2.RelayAnswer:
        self._stream(request.stream_id, context)
        return relay_pb2.RelayAnswer(open=True)


class RelayServer(serving.GrpcServer):
    """The internal relay endpoint of one grpcserver process."""

    def __init__(self, listen: str, hub: PlayHub, *, max_workers: int = 64) -> None:
        self.hub = hub
        # Each call holds a thread while the bot thinks: one per decision in flight here.
        super().__init__(
            listen,
            services=[SERVICE_NAME],
            register=lambda server: relay_pb2_grpc.add_RelayServicer_to_server(
                RelayServicer(hub), server
            ),
            max_workers=max_workers,
            max_concurrent_rpcs=max_workers * 2,
            thread_name_prefix="relay",
            reflection_enabled=False,
        )
