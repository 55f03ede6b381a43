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
from typing import TYPE_CHECKING, Protocol

import grpc

from digdown.v1 import bot_pb2
from workers.runner.net import BotStub, Undecodable, bot_channel_options, probe

if TYPE_CHECKING:
    from workers.runner.match import TimeControl


class SeatTransport(Protocol):
    """What the match loop needs of one seat's bot (see the module's docstring)."""

    def handshake(
        self, request: bot_pb2.HandshakeRequest, timeout_s: float
    ) -> bot_pb2.HandshakeReply | Undecodable:
        """The bot's handshake reply; raises ``grpc.RpcError`` (UNIMPLEMENTED is accepted)."""
        ...

    def act(
        self, request: bot_pb2.DecisionRequest, timeout_s: float
    ) -> bot_pb2.DecisionReply | Undecodable:
        """The bot's answer to one decision within ``timeout_s``; raises ``grpc.RpcError``
        (DEADLINE_EXCEEDED when no answer came in time)."""
        ...

    def gone(self) -> bool:
        """Proof that the bot is gone for good (nothing listens, the stream is closed for
        good, its process exited). False when unsure: then a failure stays a fault."""
        ...

    def close(self) -> None:
        """Release what the transport holds (idempotent)."""
        ...


TransportFactory = Callable[["TimeControl"], SeatTransport]


class TransportError(grpc.RpcError):
    """A failure of a transport that is not a gRPC call, spelled as one.

    The match loop reads only ``code()`` and ``details()``, so a relayed or in-process
    bot's failures are classified exactly like a dialled bot's.
    """

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self._code = code
        self._details = details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


class DialledTransport:
    """A bot the worker dials at ``address`` (``host:port`` or ``unix:/path``).

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
        self.channel = grpc.insecure_channel(
            address, options=bot_channel_options(tc.max_reply_bytes, tc.max_request_bytes)
        )
        self.stub = BotStub(self.channel)

    def handshake(
        self, request: bot_pb2.HandshakeRequest, timeout_s: float
    ) -> bot_pb2.HandshakeReply | Undecodable:
        reply: bot_pb2.HandshakeReply | Undecodable = self.stub.Handshake(
            request,
            timeout=timeout_s,
            wait_for_ready=True,  # a freshly started bot may still be binding
        )
        return reply

    def act(
        self, request: bot_pb2.DecisionRequest, timeout_s: float
    ) -> bot_pb2.DecisionReply | Undecodable:
        reply: bot_pb2.DecisionReply | Undecodable = self.stub.Act(request, timeout=timeout_s)
        return reply

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

    def close(self) -> None:
        self.channel.close()
