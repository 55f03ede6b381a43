"""The arena for a connect-only bot: it connects to the arena as it would to the ladder.

``--bot connect[:HOST:PORT]`` starts a small stand-in of the ladder's ``Play`` stream
(``digdown.v1.Ladder/Play``, any token, any bot name) and, beside it on a loopback
port, a ``digdown.v1.Bot`` service that forwards each ``Handshake`` and ``Act`` on the
bot's stream as a ``handshake`` / ``decision`` message and returns its answer. The
arena's games then ask that service as they ask any served bot (``RemoteSeat``): the
same time control, faults and forfeits. The author runs their bot unchanged (``connect``
of the SDK, the C++ or Node example) with ``--connect`` pointed here.

A stream that ends is waited for again (the SDK reconnects) within the decision's
time; a decision asked while none is open waits the same way. Only the ladder's own
server has limits, pings and tokens: this one serves one author on their machine.
"""

from __future__ import annotations

import itertools
import logging
import queue
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc

from digdown.v1 import bot_pb2, bot_pb2_grpc, ladder_pb2

log = logging.getLogger("engine.arena.bridge")

DEFAULT_LISTEN = "127.0.0.1:50070"
_END = object()


class _Stream:
    """One open Play stream of the author's bot."""

    def __init__(self, bot: str) -> None:
        self.bot = bot
        self.outbox: queue.Queue[Any] = queue.Queue()
        self.pending: dict[str, tuple[threading.Event, list[Any]]] = {}
        self.lock = threading.Lock()
        self.closed = threading.Event()

    def answer(self, correlation_id: str, answer: Any) -> None:
        with self.lock:
            waiting = self.pending.pop(correlation_id, None)
        if waiting is not None:
            waiting[1].append(answer)
            waiting[0].set()

    def close(self) -> None:
        self.closed.set()
        self.outbox.put(_END)
        with self.lock:
            pending, self.pending = self.pending, {}
        for event, _ in pending.values():
            event.set()  # no answer: the asker sees the stream closed


class PlayBridge:
    """``Ladder.Play`` for the author's bot, and a ``Bot`` service that forwards to it."""

    def __init__(self, listen: str = DEFAULT_LISTEN) -> None:
        self._stream: _Stream | None = None
        self._changed = threading.Condition()
        self._ids = itertools.count(1)
        self.connects = 0
        self.play_server = grpc.server(futures.ThreadPoolExecutor(8, "arena-play"))
        handler = grpc.method_handlers_generic_handler(
            "digdown.v1.Ladder",
            {
                "Play": grpc.stream_stream_rpc_method_handler(
                    self._play,
                    request_deserializer=ladder_pb2.PlayClientMessage.FromString,
                    response_serializer=ladder_pb2.PlayServerMessage.SerializeToString,
                )
            },
        )
        self.play_server.add_generic_rpc_handlers((handler,))
        port = self.play_server.add_insecure_port(listen)
        if not port:
            raise OSError(f"cannot listen on {listen}")
        self.listen = f"{listen.rsplit(':', 1)[0]}:{port}"
        self.bot_server = grpc.server(futures.ThreadPoolExecutor(32, "arena-bot"))
        bot_pb2_grpc.add_BotServicer_to_server(_Forward(self), self.bot_server)
        self.bot_address = f"127.0.0.1:{self.bot_server.add_insecure_port('127.0.0.1:0')}"

    def __enter__(self) -> PlayBridge:
        self.play_server.start()
        self.bot_server.start()
        return self

    def __exit__(self, *_: object) -> None:
        stream = self._stream
        if stream is not None:
            stream.close()
        self.bot_server.stop(1.0)
        self.play_server.stop(1.0)

    # --- the bot's stream -------------------------------------------------------------

    def _play(self, requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        try:
            first = next(requests)
        except (StopIteration, grpc.RpcError):
            return
        if first.WhichOneof("kind") != "hello":
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be a hello")
        stream = _Stream(first.hello.bot or "bot")
        with self._changed:
            if self._stream is not None:
                self._stream.close()  # the newest stream plays (a reconnect replaces it)
            self._stream = stream
            self.connects += 1
            self._changed.notify_all()
        log.info("bot %s connected (%s)", stream.bot, first.hello.version_label or "no label")
        threading.Thread(target=self._read, args=(stream, requests), daemon=True).start()
        context.add_callback(stream.close)
        yield ladder_pb2.PlayServerMessage(
            welcome=ladder_pb2.PlayWelcome(stream_id=f"arena-{self.connects}", bot=stream.bot)
        )
        while True:
            message = stream.outbox.get()
            if message is _END:
                return
            yield message

    @staticmethod
    def _read(stream: _Stream, requests: Iterator[Any]) -> None:
        try:
            for message in requests:
                kind = message.WhichOneof("kind")
                if kind in ("handshake", "decision"):
                    answer = getattr(message, kind)
                    stream.answer(answer.correlation_id, answer)
                elif kind == "ping":
                    stream.outbox.put(ladder_pb2.PlayServerMessage(pong=message.ping))
        except grpc.RpcError:
            pass
        finally:
            stream.close()

    def wait_connected(self, timeout_s: float) -> bool:
        with self._changed:
            return self._changed.wait_for(
                lambda: self._stream is not None and not self._stream.closed.is_set(), timeout_s
            )

    def ask(self, kind: str, fields: dict[str, Any], timeout_s: float) -> Any:
        """Send a ``kind`` message to the bot's stream (waiting for one to be open) and
        return its answer; None when none came within ``timeout_s``. Raises ConnectionError
        when the stream closed while it waited."""
        deadline = time.monotonic() + timeout_s
        if not self.wait_connected(timeout_s):
            raise ConnectionError("the bot is not connected")
        stream = self._stream
        assert stream is not None
        correlation = f"{kind[0]}{next(self._ids)}"
        event: threading.Event = threading.Event()
        box: list[Any] = []
        with stream.lock:
            stream.pending[correlation] = (event, box)
        if kind == "handshake":
            message = ladder_pb2.PlayServerMessage(
                handshake=ladder_pb2.PlayHandshake(correlation_id=correlation, **fields)
            )
        else:
            message = ladder_pb2.PlayServerMessage(
                decision=ladder_pb2.PlayDecision(correlation_id=correlation, **fields)
            )
        stream.outbox.put(message)
        event.wait(max(0.0, deadline - time.monotonic()))
        with stream.lock:
            stream.pending.pop(correlation, None)
        if box:
            return box[0]
        if stream.closed.is_set():
            raise ConnectionError("the bot's stream closed")
        return None


class _Forward(bot_pb2_grpc.BotServicer):
    """``digdown.v1.Bot`` answered by the connected bot (what the arena's seats dial)."""

    def __init__(self, bridge: PlayBridge) -> None:
        self.bridge = bridge

    def _ask(self, kind: str, fields: dict[str, Any], context: grpc.ServicerContext) -> Any:
        remaining = context.time_remaining()
        timeout = 3600.0 if remaining is None else max(0.0, remaining - 0.01)
        try:
            answer = self.bridge.ask(kind, fields, timeout)
        except ConnectionError as exc:
            context.abort(grpc.StatusCode.UNAVAILABLE, str(exc))
        if answer is None:
            context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "no answer in time")
        return answer

    def Handshake(self, request: Any, context: grpc.ServicerContext) -> Any:
        answer = self._ask("handshake", {"request": request, "timeout_ms": 10_000}, context)
        return answer.reply

    def ActStream(self, request_iterator: Any, context: grpc.ServicerContext) -> Any:
        context.abort(grpc.StatusCode.UNIMPLEMENTED, "the arena's bridge answers unary Act")

    def Act(self, request: Any, context: grpc.ServicerContext) -> Any:
        answer = self._ask("decision", {"request": request}, context)
        if answer.error:
            context.abort(grpc.StatusCode.UNKNOWN, f"bot error: {answer.error[:500]}")
        return answer.reply if answer.HasField("reply") else bot_pb2.DecisionReply()
