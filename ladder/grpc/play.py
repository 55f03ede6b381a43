"""Ladder.Play: connected bots' streams, held by this process, and what travels on them.

A ``PlayStream`` is one open stream of one connected bot, served as a coroutine
on the server's asyncio loop (``ladder.grpc.play_call``). The call's coroutine
*reads* the bot's messages (``hold``), enforces the limits (messages per second,
message size, answers to ids that were never asked) and hands each answer to the
request waiting for it. A *writer* task sends what is put in the stream's outbox,
which any thread may fill (the relay's, the heartbeat's: the loop is woken
thread-safely); it lives only while there is something to send, so an idle stream
holds no task, future or queue waiter of its own besides its call. The ``PlayHub``
holds every stream of the process: the relay service (``relay.py``) asks it to
forward a request to one stream and wait for the answer; its heartbeat thread pings
the streams, closes those that stopped answering, refreshes their presence records
(Redis, or the database) and re-checks their tokens; a listener closes a revoked
token's streams at once.

Why asyncio for the streams only: an idle stream then costs a few KiB and no
thread, so one process holds ten thousand of them
(``LADDER_CONNECT_STREAMS_PER_PROCESS``); what a stream does with the database or
presence (admission, its version, forgetting it) runs on the server's thread pool
(``offload``), as the rest of the Ladder service is synchronous Django code. The
relay and the heartbeat stay threads: they wait on a bot, or walk every stream.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import logging
import queue
import secrets
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from django.conf import settings
from django.db import close_old_connections, connection
from prometheus_client import Counter, Gauge

from digdown import text
from digdown.v1 import faults_pb2, ladder_pb2
from ladder.accounts import revocations
from ladder.bots import presence
from ladder.bots.connected_versions import connected_version_for_label, version_label_check
from ladder.bots.models import Bot
from ladder.common.exceptions import ApplicationError, QuotaExceeded
from ladder.common.redis import configured as redis_configured
from ladder.grpc.aio_bridge import Offload
from ladder.grpc.auth import GrpcError
from ladder.grpc.lookups import own_bot_named
from ladder.grpc.play_codec import Garbled, Oversized
from ladder.grpc.play_refusals import refusals_told

log = logging.getLogger("ladder.grpc.play")

STREAMS_OPEN = Gauge("ladder_play_streams", "Play streams of connected bots this process holds")
STREAMS_CLOSED = Counter(
    "ladder_play_streams_closed_total", "Play streams that ended, by the status they ended with",
    ["code"],
)  # fmt: skip
RELAYED = Counter(
    "ladder_play_relayed_total", "Requests relayed to a Play stream, by kind and outcome",
    ["kind", "outcome"],
)  # fmt: skip

HELLO_TIMEOUT_S = 10.0
CLOSE_WRITE_S = 2.0  # a closing stream sends what was queued within this, or is cancelled
MAX_OUTBOX = 64  # requests queued to a stream that does not read: more are refused
MAX_STRAY_ANSWERS = 20  # answers to ids never asked (or already answered) before closing
MAX_EXPIRED = 256  # timed-out requests remembered, so their late answers are not strays
MAX_REPLY_BYTES = 64 * 1024  # as TimeControl.max_reply_bytes: a larger reply is a fault
TOKEN_CHECK_S = 5.0  # how often every stream's token (and bot's standing) is checked
# A suspended bot's stream is told at once, then closed once its matches in flight are
# over: no request for QUIET_S (or after DRAIN_S at most), so they finish, not forfeit.
SUSPENDED_QUIET_S = 15.0
SUSPENDED_DRAIN_S = 300.0

# How the details of a failure start, for people reading them. Blame is decided by the
# typed reason each failure carries (FaultReason, protos/digdown/v1/faults.proto), which
# the relay sends as trailing metadata, never by these words.
STREAM_CLOSED = "bot stream closed"
RELAY_LOST = "relay lost"
BOT_LATE = "no answer within"  # DEADLINE_EXCEEDED from the relay: the bot was too slow


@dataclass(frozen=True)
class Limits:
    """What a stream may do, announced in its welcome."""

    streams_per_bot: int
    streams_per_user: int
    streams_per_process: int
    messages_per_s: int
    max_message_bytes: int
    ping_interval_s: float
    ping_timeout_s: float

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(
            streams_per_bot=settings.LADDER_CONNECT_STREAMS_PER_BOT,
            streams_per_user=settings.LADDER_CONNECT_STREAMS_PER_USER,
            streams_per_process=settings.LADDER_CONNECT_STREAMS_PER_PROCESS,
            messages_per_s=settings.LADDER_CONNECT_MESSAGES_PER_S,
            max_message_bytes=settings.LADDER_CONNECT_MAX_MESSAGE_BYTES,
            ping_interval_s=settings.LADDER_CONNECT_PING_INTERVAL_S,
            ping_timeout_s=settings.LADDER_CONNECT_PING_TIMEOUT_S,
        )


class StreamGone(Exception):
    """The stream closed (or never answered in time) while a request waited on it;
    ``reason`` says whose doing it was (a ``faults_pb2.FaultReason``)."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        reason: int = faults_pb2.FAULT_REASON_STREAM_CLOSED,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason


@dataclass
class _Waiter:
    kind: str  # "handshake" or "decision"
    done: threading.Event = field(default_factory=threading.Event)
    answer: Any = None
    error: StreamGone | None = None


class _Bucket:
    """Token bucket: ``rate`` per second, bursts of twice that."""

    __slots__ = ("at", "capacity", "rate", "tokens")

    def __init__(self, rate: int) -> None:
        self.rate, self.capacity = float(rate), float(max(1, 2 * rate))
        self.tokens, self.at = self.capacity, time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


_CLOSE = object()


class PlayStream:
    """One open stream of one connected bot (see the module docstring).

    Ten thousand of these live for hours in one process: slots, not a dict each, and
    what is needed only once a request timed out is made then (``_expired``).
    """

    __slots__ = (
        "_bucket", "_call", "_context", "_ending", "_expired", "_ids", "_lock", "_loop",
        "_pending", "_reading", "_writer", "closed", "closed_reason", "last_heard",
        "last_request", "limits", "outbox", "ping_sent", "record", "recorded", "stopping_for",
        "stray",
    )  # fmt: skip

    def __init__(self, record: presence.StreamRecord, limits: Limits) -> None:
        self.record = record
        self.limits = limits
        # Filled from any thread, emptied on the loop by a writer task made when needed.
        self.outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._loop: asyncio.AbstractEventLoop | None = None  # set once the call holds it
        self._call: asyncio.Task[Any] | None = None  # the call's task, which reads
        self._context: grpc.aio.ServicerContext | None = None
        self._writer: asyncio.Task[None] | None = None  # while there is something to send
        self._reading = False  # the call waits for the bot's next message
        self._ending = False  # the call's read was cancelled because the stream closed
        self._pending: dict[str, _Waiter] = {}
        # Requests that timed out: a late answer to one is dropped quietly, not a stray.
        self._expired: collections.OrderedDict[str, None] | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._bucket = _Bucket(limits.messages_per_s)
        self.stray = 0
        self.closed: tuple[grpc.StatusCode, str] | None = None
        # Why it closed, for the requests that find it closed (the bot's doing unless
        # the server closed it: SERVER_STOPPING).
        self.closed_reason: int = faults_pb2.FAULT_REASON_STREAM_CLOSED
        self.ping_sent: tuple[int, float] | None = None  # (nonce, when) of the unanswered ping
        self.last_heard = time.monotonic()
        # Set once presence admitted it (within the limits): only then does the heartbeat
        # refresh its record (refreshing a stream still being admitted would record it).
        self.recorded = False
        self.last_request = 0.0  # monotonic time of the last request relayed to it
        # (code, reason, when) once the bot was found suspended or retired: told, closing.
        self.stopping_for: tuple[str, str, float] | None = None

    @property
    def id(self) -> str:
        return self.record.stream_id

    # --- requests from the relay ----------------------------------------------------------

    def request(self, kind: str, build: Callable[[str], Any], timeout_s: float) -> Any:
        """Send the message ``build(correlation_id)`` and wait for its answer.

        Raises StreamGone: UNAVAILABLE when the stream is (or gets) closed,
        DEADLINE_EXCEEDED when no answer came in time, RESOURCE_EXHAUSTED when
        the bot does not read what it was sent.
        """
        correlation = f"{kind[0]}{next(self._ids)}"
        waiter = _Waiter(kind)
        self.last_request = time.monotonic()
        with self._lock:
            if self.closed is not None:
                raise StreamGone(
                    grpc.StatusCode.UNAVAILABLE,
                    f"{STREAM_CLOSED}: {self.closed[1]}",
                    self.closed_reason,
                )
            if self.outbox.qsize() >= MAX_OUTBOX:
                raise StreamGone(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"the bot's stream has {MAX_OUTBOX} messages it did not read",
                    faults_pb2.FAULT_REASON_BOT_NOT_READING,
                )
            self._pending[correlation] = waiter
        self._put(build(correlation))
        try:
            answer = self._wait(correlation, waiter, timeout_s)
        except StreamGone as exc:
            RELAYED.labels(kind, exc.code.name.lower()).inc()
            raise
        RELAYED.labels(kind, "answered").inc()
        return answer

    def _wait(self, correlation: str, waiter: _Waiter, timeout_s: float) -> Any:
        if not waiter.done.wait(timeout_s):
            with self._lock:
                self._pending.pop(correlation, None)
                if self._expired is None:
                    self._expired = collections.OrderedDict()
                self._expired[correlation] = None
                while len(self._expired) > MAX_EXPIRED:
                    self._expired.popitem(last=False)
            if waiter.done.is_set() and waiter.error is None:  # answered just now
                return waiter.answer
            raise StreamGone(
                grpc.StatusCode.DEADLINE_EXCEEDED,
                f"{BOT_LATE} {timeout_s:.3f} s",
                faults_pb2.FAULT_REASON_BOT_LATE,
            )
        if waiter.error is not None:
            raise waiter.error
        return waiter.answer

    def send(self, message: ladder_pb2.PlayServerMessage) -> None:
        """Queue a message that needs no answer (match end, ping, pong)."""
        if self.closed is None and self.outbox.qsize() < MAX_OUTBOX:
            self._put(message)

    def _put(self, message: Any) -> None:
        self.outbox.put(message)
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop is gone: nothing to wake
                loop.call_soon_threadsafe(self._write_soon)

    # --- closing ------------------------------------------------------------------------

    def close(
        self,
        code: grpc.StatusCode,
        message: str,
        reason: int = faults_pb2.FAULT_REASON_STREAM_CLOSED,
    ) -> None:
        """End the stream with a status; every waiting request fails with ``message`` and
        ``reason`` (the bot's doing, unless the server is stopping)."""
        with self._lock:
            if self.closed is not None:
                return
            self.closed = (code, message)
            self.closed_reason = reason
            pending, self._pending = self._pending, {}
        STREAMS_CLOSED.labels(code.name).inc()
        for waiter in pending.values():
            waiter.error = StreamGone(
                grpc.StatusCode.UNAVAILABLE, f"{STREAM_CLOSED}: {message}", reason
            )
            waiter.done.set()
        self._put(_CLOSE)
        loop = self._loop
        if loop is not None and code != grpc.StatusCode.CANCELLED:
            # The call stops reading, sends what was queued and ends with this status
            # (``hold``).
            with contextlib.suppress(RuntimeError):  # the loop is gone: so is the call
                loop.call_soon_threadsafe(self._stop_reading)
        log.info(
            "stream %s of bot %s closed: %s %s", self.id, self.record.bot_id, code.name, message
        )

    # --- the call: reading, and how it ends ------------------------------------------------

    async def hold(self, context: grpc.aio.ServicerContext) -> None:
        """Read the bot's messages until the stream closes (the call's coroutine), then end
        the call with the status it closed with, once what was queued before is sent.

        Reads are awaited here, not in a task of their own, and writes happen in a task
        made only when something is queued (``_write_soon``): an idle stream holds its
        call's coroutine and grpc's pending read, nothing more.
        """
        self._context = context
        self._call = asyncio.current_task()
        self._loop = asyncio.get_running_loop()  # from now on ``_put`` wakes a writer
        if not self.outbox.empty():
            self._write_soon()  # queued while it was being admitted (a ping, a close)
        with self._lock:
            open_ = self.closed is None
        try:
            if open_:
                await self._read_all(context)
            await self._finish()
        except BaseException:
            if self._writer is not None:
                self._writer.cancel()
            raise

    async def _read_all(self, context: grpc.aio.ServicerContext) -> None:
        self._reading = True
        try:
            while (message := await context.read()) is not grpc.aio.EOF:
                self.last_heard = time.monotonic()
                accepted = self._accept(message)
                del message  # an idle stream keeps no message
                if not accepted:
                    return
        except asyncio.CancelledError:
            if not self._ending:  # the call was cancelled (the bot went away)
                raise
            # ``close`` stopped the read: the call ends with the stream's status.
            if self._call is not None:
                self._call.uncancel()
        except grpc.RpcError:
            pass  # the client went away, or the call ended: the stream closes
        except Exception:
            log.exception("stream %s reader failed", self.id)
        finally:
            self._reading = False
            # The bot closed its stream, went away, or the call ended under the read.
            self.close(grpc.StatusCode.CANCELLED, "the bot closed its stream")

    def _stop_reading(self) -> None:
        """On the loop, once the stream was closed from elsewhere: end the call's read."""
        call = self._call
        if self._reading and call is not None and not call.done():
            self._ending = True
            call.cancel()

    async def _finish(self) -> None:
        """Send what was queued before the close, then end the call with the stream's
        status; a bot that does not read what is sent gets its call cancelled instead."""
        self._write_soon()
        writer = self._writer
        if writer is not None:
            done, _ = await asyncio.wait({writer}, timeout=CLOSE_WRITE_S)
            if not done:
                writer.cancel()
                raise asyncio.CancelledError  # stuck sending to a bot that does not read
        assert self.closed is not None
        code, details = self.closed
        if code != grpc.StatusCode.CANCELLED:
            raise GrpcError(code, details)

    def _accept(self, message: Any) -> bool:
        """Handle one client message; False when it ended the stream."""
        limits = self.limits
        if isinstance(message, Oversized):
            self.close(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"message of {message.size} bytes is larger than max {limits.max_message_bytes}",
            )
            return False
        if isinstance(message, Garbled):
            self.close(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"a message is not a PlayClientMessage ({message.description})",
            )
            return False
        kind = message.WhichOneof("kind")
        # Answers to what the server asked are bounded by what it asks; everything else a
        # bot sends of its own accord (pings, pongs, strays) is rate-limited.
        asked = kind in ("handshake", "decision") and self._asked(getattr(message, kind))
        if not asked and not self._bucket.take():
            self.close(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"more than {limits.messages_per_s} messages per second",
            )
            return False
        if kind == "pong":
            sent = self.ping_sent
            if sent is not None and message.pong.nonce == sent[0]:
                self.ping_sent = None
            return True
        if kind == "ping":
            self.send(ladder_pb2.PlayServerMessage(pong=message.ping))
            return True
        if kind in ("handshake", "decision"):
            answer = getattr(message, kind)
            with self._lock:
                waiter = self._pending.get(answer.correlation_id)
                if waiter is not None and waiter.kind == kind:
                    del self._pending[answer.correlation_id]
                else:
                    waiter = None
            if waiter is None:
                with self._lock:
                    expired = self._expired
                    late = expired is not None and expired.pop(answer.correlation_id, 0) is None
                if late:
                    return True  # answered after its deadline: the decision was a fault already
                return self._stray(f"an answer to {answer.correlation_id[:40]!r}, never asked")
            if kind == "decision" and answer.HasField("reply"):
                size = answer.reply.ByteSize()
                if size > MAX_REPLY_BYTES:
                    waiter.error = StreamGone(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"reply of {size} bytes is larger than max {MAX_REPLY_BYTES}",
                        faults_pb2.FAULT_REASON_REPLY_TOO_LARGE,
                    )
            waiter.answer = answer
            waiter.done.set()
            return True
        if kind == "hello":
            return self._stray("a second hello")
        return self._stray("a message of no known kind")

    def _asked(self, answer: Any) -> bool:
        """An answer to a request of ours: one waiting, or one that timed out lately."""
        with self._lock:
            expired = self._expired
            return answer.correlation_id in self._pending or (
                expired is not None and answer.correlation_id in expired
            )

    def _stray(self, what: str) -> bool:
        self.stray += 1
        if self.stray > MAX_STRAY_ANSWERS:
            self.close(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"{self.stray} messages that were not answers to what was asked (last: {what})",
            )
            return False
        return True

    # --- the writer -----------------------------------------------------------------------

    def _write_soon(self) -> None:
        """On the loop: make the writer task, unless one runs (it sends what is queued)."""
        context, loop = self._context, self._loop
        idle = self._writer is None and not self.outbox.empty()
        if idle and context is not None and loop is not None:
            self._writer = loop.create_task(self._write(context))

    async def _write(self, context: grpc.aio.ServicerContext) -> None:
        """Send the outbox until it is empty, or up to the close (a task on the loop)."""
        try:
            while True:
                try:
                    message = self.outbox.get_nowait()
                except queue.Empty:
                    return
                if message is _CLOSE:
                    return
                await context.write(message)
                del message  # an idle stream keeps no message
        except Exception as exc:  # the call ended under it: the read ends too
            log.debug("stream %s: write failed: %s", self.id, exc)
        finally:
            self._writer = None


def why_not_playing(bot: Bot | None) -> tuple[str, str]:
    """(PlayNotice code, reason) of a bot that may not play: what its stream is told."""
    if bot is None:
        return "DELETED", "the bot was deleted"
    if bot.is_retired:
        return "RETIRED", f"bot {bot.name} was retired"
    if bot.suspension == Bot.Suspension.STAFF:
        why = bot.suspended_reason or "no reason given"
        return "SUSPENDED", f"bot {bot.name} is suspended by staff: {why}; only staff can lift it"
    why = bot.suspended_reason or "inactive"
    return "SUSPENDED", (
        f"bot {bot.name} is suspended: {why}; once the cause is fixed its owner lifts it"
        " (Reactivate on the bot's page, or ReactivateBot) and the bot reconnects"
    )


@dataclass(slots=True)
class Opened:
    """A stream admitted by ``PlayHub.open`` and its welcome (dropped once sent: the call
    holds this for the stream's life)."""

    stream: PlayStream
    welcome: ladder_pb2.PlayServerMessage | None


class PlayHub:
    """Every stream this process holds, and the threads that keep them honest."""

    def __init__(self, relay_address: str, limits: Limits | None = None) -> None:
        self.relay_address = relay_address
        self.limits = limits or Limits.from_settings()
        self._streams: dict[str, PlayStream] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    # --- life -----------------------------------------------------------------------------

    def start(self) -> None:
        log.info(
            "presence of connected bots in %s%s", presence.backend(),
            "" if presence.backend() == "redis" else " (one ladder's processes share it;"
            " revoked tokens' streams close within the token check)",
        )  # fmt: skip
        threads = [(self._heartbeat, "play-heartbeat")]
        if redis_configured():  # the revocation channel: without Redis the token check does
            threads.append((self._revocations, "play-revoked"))
        for target, name in threads:
            thread = threading.Thread(target=target, name=name, daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        """Close every stream (UNAVAILABLE: reconnect elsewhere) and forget its record."""
        self._stopping.set()
        for stream in self.streams():
            stream.close(
                grpc.StatusCode.UNAVAILABLE,
                "the server is stopping; reconnect",
                faults_pb2.FAULT_REASON_SERVER_STOPPING,
            )
            self._forget(stream)
        for thread in self._threads:
            thread.join(timeout=3.0)

    def streams(self) -> list[PlayStream]:
        with self._lock:
            return list(self._streams.values())

    def get(self, stream_id: str) -> PlayStream | None:
        with self._lock:
            return self._streams.get(stream_id)

    # --- one call -------------------------------------------------------------------------

    async def open(
        self,
        read: Callable[[], Awaitable[Any]],
        context: grpc.aio.ServicerContext,
        *,
        user: Any,
        token_id: int | None,
        offload: Offload,
    ) -> Opened:
        """Admit a Play call of an authenticated caller: its hello, its bot, its place
        within the limits (a coroutine on the loop; ``offload`` runs what touches the
        database or presence on the thread pool). What it returns keeps no model
        instance: a stream lives for hours, and objects kept from a burst of
        admissions would pin the memory of everything allocated beside them.
        ``read`` gives the call's next message (``context.read``: no request iterator,
        which grpc.aio would keep for the stream's life), ``grpc.aio.EOF`` at its end."""
        if self._stopping.is_set():
            raise GrpcError(grpc.StatusCode.UNAVAILABLE, "the server is stopping; reconnect")
        assert token_id is not None  # Play is not a public method: the guard wants a token
        hello = await self._hello(read)
        bot = await offload(self._admit, hello, user)
        limits = self.limits
        record = presence.StreamRecord(
            stream_id=secrets.token_hex(8),
            bot_id=bot.pk,
            user_id=user.pk,
            token_id=token_id,
            relay=self.relay_address,
            since=time.time(),
            label=text.clean(hello.label, 64),
            version_label=hello.version_label,
        )
        stream = PlayStream(record, limits)
        with self._lock:
            if len(self._streams) >= limits.streams_per_process:
                raise GrpcError(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"this server holds {limits.streams_per_process} streams, its limit;"
                    " retry later or on another server",
                )
            self._streams[stream.id] = stream
            STREAMS_OPEN.set(len(self._streams))
        try:
            await offload(self._admitted, stream, bot, user)
        except BaseException:
            self._end(stream, offload)
            raise
        log.info("bot %s connected: stream %s (%s)", bot.name, stream.id, record.label)
        welcome = ladder_pb2.PlayServerMessage(
            welcome=ladder_pb2.PlayWelcome(
                stream_id=stream.id,
                bot=bot.name,
                ping_interval_ms=int(limits.ping_interval_s * 1000),
                ping_timeout_ms=int(limits.ping_timeout_s * 1000),
                max_messages_per_second=limits.messages_per_s,
                max_message_bytes=limits.max_message_bytes,
                max_reply_bytes=MAX_REPLY_BYTES,
                max_streams_per_bot=limits.streams_per_bot,
                max_streams_per_user=limits.streams_per_user,
            )
        )
        return Opened(stream, welcome)

    async def serve(
        self, opened: Opened, context: grpc.aio.ServicerContext, offload: Offload
    ) -> None:
        """Hold an opened stream until it closes: its welcome first, then ``PlayStream.hold``
        (reads here, writes in a task while there is something to send)."""
        stream, welcome = opened.stream, opened.welcome
        opened.welcome = None
        assert welcome is not None
        try:
            await context.write(welcome)
            del welcome
            await stream.hold(context)
        finally:
            self._end(stream, offload)

    def _end(self, stream: PlayStream, offload: Offload) -> None:
        # Closing is quick; forgetting the record is presence I/O: on a pool thread,
        # not awaited (the call may be cancelled, and the loop must not wait on it).
        stream.close(grpc.StatusCode.CANCELLED, "the bot closed its stream")
        if self.get(stream.id) is not None:
            offload(self._forget, stream)  # not awaited: it logs its own failure

    def _admitted(self, stream: PlayStream, bot: Bot, user: Any) -> None:
        """Record the admitted stream (within its limits) and its version label."""
        try:
            with refusals_told(bot, user):  # past its stream limits: told like the checks
                self._record(stream, bot, user)
            if stream.record.version_label:
                self._version(bot, stream.record.version_label)
        finally:
            connection.close()

    async def _hello(self, read: Callable[[], Awaitable[Any]]) -> Any:
        """The first client message, which must be a hello, within ``HELLO_TIMEOUT_S``."""
        message: Any
        try:
            message = await asyncio.wait_for(read(), HELLO_TIMEOUT_S)
            if message is grpc.aio.EOF:
                message = None
        except TimeoutError:
            raise GrpcError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"no hello within {HELLO_TIMEOUT_S:g} s (send PlayClientMessage.hello first)",
            ) from None
        except (StopAsyncIteration, grpc.RpcError):
            message = None
        except Exception as exc:
            message = exc
        if isinstance(message, Oversized):
            raise GrpcError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"message of {message.size} bytes is larger than max"
                f" {self.limits.max_message_bytes}",
            )
        if message is None or isinstance(message, Garbled | Exception):
            raise GrpcError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "the first message must be a PlayClientMessage.hello",
            )
        if message.WhichOneof("kind") != "hello":
            raise GrpcError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "the first message must be a PlayClientMessage.hello",
            )
        return message.hello

    def _admit(self, hello: Any, user: Any) -> Bot:
        """The caller's connected, playable bot named in ``hello``, within the stream limits.

        A refusal of a bot of the caller's is told to its owner (``play_refusals``).
        """
        close_old_connections()
        try:
            bot = own_bot_named(hello.bot, user)
            if hello.version_label:
                try:
                    version_label_check(hello.version_label)
                except ApplicationError as exc:
                    raise GrpcError(grpc.StatusCode.INVALID_ARGUMENT, exc.message) from None
            with refusals_told(bot, user):
                return self._admit_bot(bot, user)
        finally:
            # Opening streams must not keep connections: a burst of reconnecting bots
            # would hold one per pool thread (the unary calls' threads keep theirs).
            connection.close()

    def _admit_bot(self, bot: Bot, user: Any) -> Bot:
        if bot.kind != Bot.Kind.CONNECTED:
            raise GrpcError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"bot {bot.name} is {bot.kind}; only a CONNECTED bot plays over Play",
            )
        if not bot.playable:
            raise GrpcError(grpc.StatusCode.FAILED_PRECONDITION, why_not_playing(bot)[1])
        return bot

    @staticmethod
    def _version(bot: Bot, label: str) -> None:
        """The stream's version label: the bot's version of that name (new if never seen)
        becomes its current one (``ladder.bots.connected_versions``)."""
        try:
            close_old_connections()
            version = connected_version_for_label(bot_id=bot.pk, label=label)
        except QuotaExceeded as exc:
            raise GrpcError(grpc.StatusCode.RESOURCE_EXHAUSTED, exc.message) from None
        except ApplicationError as exc:
            raise GrpcError(grpc.StatusCode.INVALID_ARGUMENT, exc.message) from None
        finally:
            connection.close()  # this thread holds the stream for hours
        log.info("bot %s plays version %d (label %s)", bot.name, version.number, label)

    def _record(self, stream: PlayStream, bot: Bot, user: Any) -> None:
        """Record the stream in presence within the per-bot and per-user limits, counted
        and recorded in one atomic step across every server (``presence.admit``)."""
        limits = self.limits
        try:
            refused = presence.admit(
                stream.record, per_bot=limits.streams_per_bot, per_user=limits.streams_per_user
            )
        except Exception as exc:  # presence away: the ladder's trouble, the bot retries
            raise GrpcError(
                grpc.StatusCode.UNAVAILABLE, f"presence records unreachable ({exc}); retry"
            ) from None
        finally:
            if presence.backend() == "database":
                connection.close()  # this thread holds the stream for hours
        if refused is None:
            stream.recorded = True
            if self.get(stream.id) is None:  # forgotten (closed) while it was being admitted
                with contextlib.suppress(Exception):
                    presence.stream_close(stream.record)
            return
        self._forget(stream)
        if refused.limit == "bot":
            raise GrpcError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"bot {bot.name} has {refused.open_now} streams open,"
                f" the limit of {limits.streams_per_bot}",
            )
        raise GrpcError(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"you have {refused.open_now} streams open, the limit of {limits.streams_per_user}",
        )

    def _forget(self, stream: PlayStream) -> None:
        with self._lock:
            if self._streams.pop(stream.id, None) is None:
                return
            STREAMS_OPEN.set(len(self._streams))
        if not stream.recorded:
            return
        try:
            presence.stream_close(stream.record)
        except Exception as exc:  # presence down: the record expires by itself
            log.warning("could not remove stream %s from presence: %s", stream.id, exc)
        finally:
            if presence.backend() == "database" and threading.current_thread() not in self._threads:
                connection.close()  # a call's thread: it holds no connection between calls

    # --- background -----------------------------------------------------------------------

    def close_token(self, token_id: int, why: str = "the API token was revoked") -> int:
        """Close every stream opened with ``token_id`` at once; how many."""
        closed = 0
        for stream in self.streams():
            if stream.record.token_id == token_id:
                stream.close(grpc.StatusCode.UNAUTHENTICATED, why)
                self._forget(stream)
                closed += 1
        return closed

    def _revocations(self) -> None:
        revocations.listen_revoked(self.close_token, self._stopping.is_set)

    def _heartbeat(self) -> None:
        nonce = itertools.count(1)
        last_ping = last_tokens = time.monotonic()
        while not self._stopping.wait(presence.HEARTBEAT_S):
            now = time.monotonic()
            streams = [s for s in self.streams() if s.closed is None]
            limits = self.limits
            for s in streams:
                if s.ping_sent is not None and now - s.ping_sent[1] > limits.ping_timeout_s:
                    s.close(
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        f"no pong within {limits.ping_timeout_s:g} s",
                    )
                    self._forget(s)
            if now - last_ping >= limits.ping_interval_s:
                last_ping = now
                for s in streams:
                    if s.ping_sent is None and s.closed is None:
                        n = next(nonce)
                        s.ping_sent = (n, now)
                        s.send(ladder_pb2.PlayServerMessage(ping=ladder_pb2.PlayPing(nonce=n)))
            try:
                live = [s.record for s in self.streams() if s.closed is None and s.recorded]
                presence.heartbeat(live)
            except Exception as exc:
                log.warning("presence heartbeat failed: %s", exc)
                close_old_connections()
            if now - last_tokens >= TOKEN_CHECK_S:
                last_tokens = now
                self._check_tokens()
                self._check_bots()

    def _check_bots(self) -> None:
        """Tell the streams of a bot that was suspended (or retired, or deleted) why it stops
        playing, then close them once their matches in flight are over."""
        from ladder.bots.models import Bot

        streams = [s for s in self.streams() if s.closed is None]
        ids = {s.record.bot_id for s in streams if s.stopping_for is None}
        if ids:
            try:
                close_old_connections()
                rows = {b.pk: b for b in Bot.objects.filter(pk__in=ids)}
            except Exception as exc:
                log.warning("bot check failed: %s", exc)
                return
            finally:
                close_old_connections()
            for stream in streams:
                bot_id = stream.record.bot_id
                if bot_id in ids and (bot_id not in rows or not rows[bot_id].playable):
                    self._tell_stopping(stream, rows.get(bot_id))
        now = time.monotonic()
        for stream in streams:
            if stream.stopping_for is None:
                continue
            _code, reason, since = stream.stopping_for
            quiet = not stream._pending and now - stream.last_request >= SUSPENDED_QUIET_S
            if quiet or now - since >= SUSPENDED_DRAIN_S:
                stream.close(grpc.StatusCode.FAILED_PRECONDITION, reason)
                self._forget(stream)

    @staticmethod
    def _tell_stopping(stream: PlayStream, bot: Bot | None) -> None:
        code, reason = why_not_playing(bot)
        stream.stopping_for = (code, reason, time.monotonic())
        stream.send(
            ladder_pb2.PlayServerMessage(notice=ladder_pb2.PlayNotice(code=code, reason=reason))
        )
        log.info("stream %s of bot %s: %s (%s)", stream.id, stream.record.bot_id, code, reason)

    def _check_tokens(self) -> None:
        """Close the streams whose token was revoked (if the publication was missed)."""
        from ladder.accounts.models import ApiToken

        ids = {s.record.token_id for s in self.streams()}
        if not ids:
            return
        try:
            close_old_connections()
            valid = set(
                ApiToken.objects.filter(pk__in=ids, revoked_at__isnull=True).values_list(
                    "pk", flat=True
                )
            )
        except Exception as exc:
            log.warning("token check failed: %s", exc)
            return
        finally:
            close_old_connections()
        for token_id in ids - valid:
            self.close_token(token_id)
