"""One seat transport: how the match loop reaches a seat's bot, whatever the bot is.

The match loop (``workers.runner.match``) asks a seat's bot two things — the
handshake once, then one decision at a time — and needs one proof: that the bot
is gone for good (a dead bot forfeits, a slow or broken one only faults). Every
way of reaching a bot offers exactly that, as a ``SeatTransport``:

- a *dialled* bot (a remote endpoint, or a hosted bot on its sandbox's unix
  socket): ``DialledTransport``, over unary ``Act`` calls or, when the handshake
  negotiates protocol 2, one bidirectional ``ActStream`` per seat;
- a *connected* bot (it dialled the ladder and is relayed to the worker): the
  transport of ``workers.runner.relay`` / ``workers.connected``.

Failures are raised as ``grpc.RpcError`` with a ``code()`` and ``details()`` — a
transport that is not gRPC raises a ``TransportError`` — so the loop's fault
classification (timeout, unavailable, malformed, too large, dead bot) is one
piece of code for every kind of bot. A reply that is not the message it should
be comes back as ``Undecodable`` (described, never raised), so a hostile bot's
bytes cannot fill a log with tracebacks.

A ``BotSpec`` names its transport with a factory (``BotSpec.transport``) called
with the match's ``TimeControl``; without one the runner dials ``BotSpec.address``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import grpc

from digdown.v1 import bot_pb2
from workers.runner.net import (
    BOT_CHANNELS,
    BotStub,
    TransportError,
    Undecodable,
    probe,
    rpc_code,
    rpc_details,
)
from workers.runner.streams import CallStream, begin_unary
from workers.runner.terms import SeatTransport, TimeControl, TransportFactory

__all__ = ["DialledTransport", "SeatTransport", "TransportError", "TransportFactory"]

# How long a bot's stream may take to end after the match (then it is cancelled).
CLOSE_GRACE_S = 0.5
# Refusals of a fresh ActStream that mean "ask me by unary Act" (not a fault).
_NO_STREAM = {grpc.StatusCode.UNIMPLEMENTED, grpc.StatusCode.RESOURCE_EXHAUSTED}
# Failures that may be the link's (not the bot's answer): the channel is replaced after them.
_LINK_FAILED = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}


class DialledTransport:
    """A bot the worker dials at ``address`` (``host:port`` or ``unix:/path``).

    The handshake negotiates the protocol: a bot answering 2 (to a runner that
    offered 2) is asked over one ``ActStream`` for the game, any other by unary
    ``Act``. A stream that failed is dropped and the next decision opens a new one,
    so a late reply is never read as a later decision's; a bot that refuses a
    fresh stream (UNIMPLEMENTED, or RESOURCE_EXHAUSTED short of "message larger
    than max": its stream limit) is asked by unary Act from then on, this
    decision included, within what is left of its time.

    ``is_alive`` (hosted bots: the sandbox's process) makes ``gone`` certain without
    probing; otherwise ``gone`` probes the address a few times: only "connection
    refused" (nothing listens any more) is proof.
    """

    def __init__(
        self,
        address: str,
        time_control: TimeControl,
        *,
        is_alive: Callable[[], bool] | None = None,
    ) -> None:
        self.address = address
        self.time_control = time_control
        self.is_alive = is_alive
        tc = time_control
        self._limits = (tc.max_reply_bytes, tc.max_request_bytes)
        # Kept across matches while the bot behaves (net.BotChannels): no connect per match.
        self.channel: grpc.Channel | None = BOT_CHANNELS.take(address, *self._limits)
        self.stub = BotStub(self.channel)
        self.faulted = False  # any failure or undecodable reply: the channel is not kept
        self.streaming = False  # negotiated in the handshake
        self._stream: CallStream | None = None

    def handshake(
        self, request: bot_pb2.HandshakeRequest, timeout_s: float
    ) -> bot_pb2.HandshakeReply | Undecodable:
        return self.handshake_begin(request, timeout_s)()

    def handshake_begin(
        self, request: bot_pb2.HandshakeRequest, timeout_s: float
    ) -> Callable[[], bot_pb2.HandshakeReply | Undecodable]:
        """Send the handshake now; the returned function waits for the reply (raising
        ``grpc.RpcError`` as ``handshake`` does). The match starts every seat's this way
        on its own thread, so they are answered side by side without a thread each."""
        # wait_for_ready: a freshly started bot may still be binding
        pending = begin_unary(self.stub.Handshake, request, timeout_s, wait_for_ready=True)

        def reply() -> bot_pb2.HandshakeReply | Undecodable:
            try:
                answer: bot_pb2.HandshakeReply | Undecodable = pending()
            except grpc.RpcError as exc:
                self.faulted = True
                if rpc_code(exc) in _LINK_FAILED:
                    self._redial()
                raise
            self._handshaken(request, answer)
            return answer

        return reply

    def _handshaken(
        self, request: bot_pb2.HandshakeRequest, reply: bot_pb2.HandshakeReply | Undecodable
    ) -> None:
        if isinstance(reply, Undecodable):
            self.faulted = True
            return
        self.streaming = request.protocol_version >= 2 and reply.protocol_version == 2
        if self.streaming and self._stream is None:
            # Opened now, as soon as the handshake is answered, so the seats' streams are
            # set up side by side before the game, not one by one at their first
            # decisions. Nothing is sent before the first request: a refusal comes then.
            self._stream = CallStream(self.stub.ActStream)

    def act(
        self, request: bot_pb2.DecisionRequest, timeout_s: float
    ) -> bot_pb2.DecisionReply | Undecodable:
        try:
            if self.streaming:
                reply = self._act_streamed(request, timeout_s)
            else:
                reply = self.stub.Act(request, timeout=timeout_s)
        except grpc.RpcError as exc:
            self.faulted = True
            if rpc_code(exc) in _LINK_FAILED:
                self._redial()
            raise
        if isinstance(reply, Undecodable):
            self.faulted = True
        return reply

    def _act_streamed(
        self, request: bot_pb2.DecisionRequest, timeout_s: float
    ) -> bot_pb2.DecisionReply | Undecodable:
        started = time.monotonic()
        if self._stream is None:
            self._stream = CallStream(self.stub.ActStream)
        stream = self._stream
        try:
            reply: bot_pb2.DecisionReply | Undecodable = stream.ask(request, timeout_s)
        except grpc.RpcError as exc:
            self._stream = None
            if (
                stream.exchanges == 0
                and rpc_code(exc) in _NO_STREAM
                and "larger than max" not in rpc_details(exc)
            ):
                self.streaming = False
                left = timeout_s - (time.monotonic() - started)
                if left <= 0:
                    raise TransportError(
                        grpc.StatusCode.DEADLINE_EXCEEDED, "stream refused; no time left"
                    ) from None
                fallback: bot_pb2.DecisionReply | Undecodable = self.stub.Act(request, timeout=left)
                return fallback
            raise
        if stream.broken:
            self._stream = None
            self.faulted = True
        return reply

    def _redial(self) -> None:
        """Replace the channel after a failure of the link: a channel whose connect failed
        sits in its reconnect backoff and fails the next call at once with the old error
        (UNAVAILABLE "connect() timed out" after the network is back), and a connection
        opened before an outage may be reset by it. So a connection that failed is never
        used again: not for the game after a failed handshake, not for the next decision
        after a failed one. Each call's failure is then evidence from its own moment."""
        if self._stream is not None:
            self._stream.close(grace_s=0.0)
            self._stream = None
        if self.channel is not None:
            BOT_CHANNELS.give(self.channel, self.address, *self._limits, keep=False)
        self.channel = BOT_CHANNELS.dial(self.address, *self._limits)
        self.stub = BotStub(self.channel)

    def gone(self) -> bool:
        if self.is_alive is not None and not self.is_alive():
            return True
        tc = self.time_control
        for attempt in range(max(1, tc.probe_attempts)):
            if attempt:
                time.sleep(tc.probe_interval_s)
            if probe(self.address, tc.probe_s) == "refused":
                return True
        return False

    def half_close(self) -> None:
        """Start ending the seat's stream (``close`` waits for its end): the match ends
        every stream this way first, so their ends overlap without a thread each."""
        if self._stream is not None:
            self._stream.half_close()

    def close(self, *, until: float | None = None) -> None:
        """Release the stream and the channel; ``until`` (monotonic) bounds the wait for
        the bot to end its stream when several are waited for one after the other."""
        if self._stream is not None:
            # A bot between decisions ends its stream at once; one that does not is
            # cancelled after a moment (the match is over, nothing waits for it).
            grace = CLOSE_GRACE_S if until is None else max(0.0, until - time.monotonic())
            self._stream.close(grace_s=grace)
            self._stream = None
        if self.channel is not None:
            channel, self.channel = self.channel, None
            BOT_CHANNELS.give(channel, self.address, *self._limits, keep=not self.faulted)
