"""Channels, probes and error types of the match runner.

Kept apart from the match loop so the network policy (message limits,
reconnect backoff, what counts as "the bot is gone") is in one place.
"""

from __future__ import annotations

import errno
import os
import socket
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.message import Message

from digdown import text
from digdown.v1 import bot_pb2


class RunnerError(Exception):
    """A match could not be played to the end; nothing was written."""

    retryable = False


class NoSeatPlayed(RunnerError):
    """Every seat was unreachable or dead before the first decision: nobody played, so the
    match says nothing about who is better. It is errored, unrated (a forfeit of every
    seat in seat order would hand the last seat a win with no decision; a tie of all of
    them would still move unequal ratings towards each other). Not retried: the bots'
    machines answered (refused) or their processes exited, which a retry in seconds does
    not change."""


class EngineUnavailable(RunnerError):
    """The engine is gone or restarted (UNAVAILABLE, deadline, game lost).

    Retryable: the match itself is fine, play it again (on the same or another
    engine). Bots are never blamed for it and no replay is written.
    """

    retryable = True


class EngineError(RunnerError):
    """The engine refused a request it should have accepted (a bug, not a bot's fault)."""


class MatchOverrun(RunnerError):
    """The match ran past its wall-clock limit (``TimeControl.match_s``) and was stopped.

    Not retryable: the same bots would most likely overrun again.
    """


class MatchAborted(RunnerError):
    """Whoever runs the match asked it to stop (e.g. its lease was lost or it was cancelled)."""


def engine_channel_options(max_message_bytes: int = 64 * 1024 * 1024) -> list[tuple[str, Any]]:
    """Engine channel: room for a whole replay (grpc's default limit is 4 MiB); quick reconnects."""
    return [
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 1000),
        ("grpc.enable_retries", 0),  # the runner retries Step itself (safe with `ply`)
    ]


def bot_channel_options(max_reply_bytes: int, max_request_bytes: int) -> list[tuple[str, Any]]:
    """Bot channel: a reply larger than `max_reply_bytes` is a RESOURCE_EXHAUSTED fault, not
    an allocation; short reconnect backoff so a bot that dropped one
    connection is asked again at the next decision instead of failing fast for seconds."""
    return [
        ("grpc.max_receive_message_length", max_reply_bytes),
        ("grpc.max_send_message_length", max_request_bytes),
        ("grpc.initial_reconnect_backoff_ms", 50),
        ("grpc.min_reconnect_backoff_ms", 50),
        ("grpc.max_reconnect_backoff_ms", 500),
        ("grpc.enable_retries", 0),  # a retried Act would hide faults and double the time
        ("grpc.max_metadata_size", 16 * 1024),
    ]


class BotChannels:
    """Bot channels kept across matches, per (process, address, limits).

    A channel's connect (and, over TCP, its first HTTP/2 settings round trip)
    costs about as much as dozens of decisions, and the ladder seats the same
    bots match after match. A seat takes its channel with ``take`` and gives it
    back with ``give(keep=...)``: only a channel whose match saw no transport
    fault from it is kept (a bot that failed is dialled afresh next time, as
    before: no fault handling depends on a channel's history). At most
    ``capacity`` idle channels are kept, the least recently used closed first
    (hosted bots get a new socket path per sandbox). A channel is never shared
    by two seats at once, and a forked child starts with none: a channel made
    before a fork hangs in the child.
    """

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._lock = threading.Lock()
        # key -> idle channels for it (a seat takes one; two seats may dial one address)
        self._idle: OrderedDict[tuple[str, int, int], list[grpc.Channel]] = OrderedDict()
        self.dialled = 0  # channels created (for tests and benchmarks)

    def take(self, address: str, max_reply_bytes: int, max_request_bytes: int) -> grpc.Channel:
        key = (address, max_reply_bytes, max_request_bytes)
        with self._lock:
            idle = self._idle.get(key)
            if idle:
                channel = idle.pop()
                if not idle:
                    del self._idle[key]
                return channel
            self.dialled += 1
        return grpc.insecure_channel(
            address, options=bot_channel_options(max_reply_bytes, max_request_bytes)
        )

    def dial(self, address: str, max_reply_bytes: int, max_request_bytes: int) -> grpc.Channel:
        """A new channel, never an idle one: for a seat whose channel just failed (its
        reconnect backoff would fail the next call at once, with the old failure)."""
        with self._lock:
            self.dialled += 1
        return grpc.insecure_channel(
            address, options=bot_channel_options(max_reply_bytes, max_request_bytes)
        )

    def give(
        self,
        channel: grpc.Channel,
        address: str,
        max_reply_bytes: int,
        max_request_bytes: int,
        *,
        keep: bool,
    ) -> None:
        if not keep or self.capacity <= 0:
            channel.close()
            return
        key = (address, max_reply_bytes, max_request_bytes)
        evicted: list[grpc.Channel] = []
        with self._lock:
            self._idle.setdefault(key, []).append(channel)
            self._idle.move_to_end(key)
            while sum(len(v) for v in self._idle.values()) > self.capacity:
                _, old = self._idle.popitem(last=False)
                evicted.extend(old)
        for old_channel in evicted:
            old_channel.close()

    def idle(self, address: str) -> int:
        """Idle channels kept for ``address`` (any limits)."""
        with self._lock:
            return sum(len(v) for k, v in self._idle.items() if k[0] == address)

    def clear(self) -> None:
        with self._lock:
            idle, self._idle = list(self._idle.values()), OrderedDict()
        for channels in idle:
            for channel in channels:
                channel.close()


BOT_CHANNELS = BotChannels()


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


@dataclass(frozen=True)
class Undecodable:
    """A bot reply that is not the message it should be, described (size, first bytes)."""

    description: str


def _lenient(message_cls: type[Message]) -> Callable[[bytes], Any]:
    """A response deserializer that never raises: bad bytes become an `Undecodable`.

    With the generated stub, grpcio logs a traceback for every reply that does
    not parse and reports only "Exception deserializing response!"; a hostile
    bot could fill the log that way, and its author would not learn what was wrong.
    """

    def deserialize(data: bytes) -> Any:
        try:
            return message_cls.FromString(data)
        except Exception:  # DecodeError, or whatever protobuf raises on hostile bytes
            return Undecodable(text.describe_bytes(data))

    return deserialize


def _serialized(request: Any) -> bytes:
    """A decision request's bytes: a ``DecisionRequest`` or the runner's own
    ``RawDecisionRequest`` (workers.runner.passthrough: the observation as the
    engine's bytes), which encodes the same."""
    data: bytes = request.SerializeToString()
    return data


class BotStub:
    """The `digdown.v1.Bot` stub of the runner: replies are messages or `Undecodable`."""

    # One multi-callable per method, made in __init__ with its own reply decoder.
    Handshake: Callable[..., bot_pb2.HandshakeReply | Undecodable]
    Act: Callable[..., bot_pb2.DecisionReply | Undecodable]
    ActStream: grpc.StreamStreamMultiCallable  # one stream per game (workers.runner.streams)

    def __init__(self, channel: grpc.Channel) -> None:
        path = f"/{bot_pb2.DESCRIPTOR.services_by_name['Bot'].full_name}/"
        self.Handshake = channel.unary_unary(
            path + "Handshake",
            request_serializer=bot_pb2.HandshakeRequest.SerializeToString,
            response_deserializer=_lenient(bot_pb2.HandshakeReply),
        )
        self.Act = channel.unary_unary(
            path + "Act",
            request_serializer=_serialized,
            response_deserializer=_lenient(bot_pb2.DecisionReply),
        )
        self.ActStream = channel.stream_stream(
            path + "ActStream",
            request_serializer=_serialized,
            response_deserializer=_lenient(bot_pb2.DecisionReply),
        )


def probe(address: str, timeout_s: float) -> str:
    """Can anything accept a connection at `address` right now?

    Returns "open", "refused" (nothing listens: the bot process is gone), or
    "unknown" (timeout, unsupported address form, resolution failure). Only
    "refused" is proof of a dead bot; everything else stays a fault.
    """
    family: int
    target: Any
    if address.startswith("unix:"):
        family, target = socket.AF_UNIX, address[len("unix:") :].removeprefix("//")
    else:
        addr = address.removeprefix("ipv4:").removeprefix("dns:///").removeprefix("ipv6:")
        host, sep, port = addr.rpartition(":")
        if not sep or not port.isdigit():
            return "unknown"
        host = host.strip("[]")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        target = (host, int(port))
        if family == socket.AF_INET and not _is_ip(host):
            try:
                target = (socket.gethostbyname(host), int(port))
            except OSError:
                return "unknown"  # DNS may be down for a moment; not proof of death
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout_s)
    try:
        sock.connect(target)
        return "open"
    except (ConnectionRefusedError, FileNotFoundError):
        return "refused"
    except OSError as exc:
        if exc.errno in (errno.ECONNREFUSED, errno.ENOENT):
            return "refused"
        return "unknown"
    finally:
        sock.close()


def _is_ip(host: str) -> bool:
    try:
        socket.inet_aton(host)
        return True
    except OSError:
        return False


def rpc_code(exc: grpc.RpcError) -> grpc.StatusCode:
    code = exc.code() if hasattr(exc, "code") else None
    return code if isinstance(code, grpc.StatusCode) else grpc.StatusCode.UNKNOWN


def rpc_details(exc: grpc.RpcError, limit: int = text.REASON_MAX) -> str:
    """The status message, cleaned and cut (it may come from a hostile bot)."""
    details = exc.details() if hasattr(exc, "details") else str(exc)
    return text.clean(details or "", limit)
