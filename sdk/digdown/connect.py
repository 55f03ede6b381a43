"""Connect a bot out to the ladder (Ladder.Play): no listening port, no public address.

    from digdown.connect import connect
    connect(act, ladder="ladder.example.org:50052", token=TOKEN, bot_name="mybot")

The same ``act`` (or ``factory=``) as ``serve(...)``: the decisions arrive on a
stream the bot opened, are answered by the same code (``BotService.Act``) and
travel back on the same stream. What this module adds around it:

- the hello naming the bot, the welcome with the server's limits;
- decisions of several matches at once (a small thread pool), pings answered
  as they come, a pong expected for its own keepalive;
- reconnect with exponential backoff (0.5 s doubling to ``max_backoff_s``,
  jittered; reset once a stream was welcomed), rotating through the addresses
  of ``ladder`` ("a:50052,b:50052"): a server that stops or dies sends its bots
  to another replica;
- statuses that reconnecting cannot fix end it (UNAUTHENTICATED, PERMISSION_DENIED,
  NOT_FOUND, FAILED_PRECONDITION, INVALID_ARGUMENT): exit code 2, reason logged;
- SIGTERM/SIGINT close the stream and return 0.

The end of each match (rank, rating change) is logged and given to
``on_match_end`` if set.
"""

from __future__ import annotations

# First of all: grpcio reads its I/O settings when it is imported (digdown.game_io).
import digdown.game_io  # noqa: F401  # isort: skip
import argparse
import logging
import queue
import random
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from typing import Any

import grpc

from digdown import serving
from digdown.bot import BotService
from digdown.v1 import ladder_pb2, ladder_pb2_grpc

log = logging.getLogger("digdown.connect")

FATAL = {
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.INVALID_ARGUMENT,
}
CHANNEL_OPTIONS = [
    # gRPC keepalive of the connection (the stream's own ping/pong covers the bot's side).
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.max_receive_message_length", 8 * 1024 * 1024),
    ("grpc.enable_retries", 0),
]


class _Aborted(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code, self.details = code, details


class _DecisionContext:
    """What ``BotService.Act`` needs of a servicer context: ``abort`` raises."""

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        raise _Aborted(code, details)


class Connection:
    """One bot's connection to the ladder, reconnecting until ``stop()``."""

    def __init__(
        self,
        service: BotService,
        *,
        ladder: str,
        token: str,
        bot_name: str,
        label: str = "",
        version_label: str = "",
        max_backoff_s: float = 30.0,
        max_workers: int = 4,
        on_match_end: Callable[[dict[str, Any]], None] | None = None,
        on_welcome: Callable[[ladder_pb2.PlayWelcome], None] | None = None,
    ) -> None:
        self.service = service
        self.addresses = [a.strip() for a in ladder.split(",") if a.strip()]
        if not self.addresses:
            raise ValueError("ladder needs at least one host:port")
        self.token, self.bot_name, self.label = token, bot_name, label
        self.version_label = version_label
        self.max_backoff_s = max_backoff_s
        self.on_match_end, self.on_welcome = on_match_end, on_welcome
        self.pool = futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="act")
        self.stopping = threading.Event()
        self.streams = 0  # streams welcomed so far
        self.exit_code = 0
        self._call: Any = None

    def stop(self) -> None:
        self.stopping.set()
        call = self._call
        if call is not None:
            call.cancel()

    def run(self) -> int:
        """Connect, play, reconnect with backoff; 0 when stopped, 2 on a fatal status."""
        backoff, attempt = 0.5, 0
        while not self.stopping.is_set():
            address = self.addresses[attempt % len(self.addresses)]
            attempt += 1
            welcomed, status = self._play_once(address)
            if self.stopping.is_set():
                break
            code, details = status
            if code in FATAL:
                log.error("the ladder refused the stream: %s: %s", code.name, details)
                self.exit_code = 2
                break
            if welcomed:
                backoff = 0.5
            delay = backoff * random.uniform(0.5, 1.0)
            log.warning(
                "stream to %s ended (%s: %s); reconnecting in %.1f s",
                address, code.name, details, delay,
            )  # fmt: skip
            backoff = min(backoff * 2, self.max_backoff_s)
            self.stopping.wait(delay)
        self.pool.shutdown(wait=False, cancel_futures=True)
        return self.exit_code

    def _play_once(self, address: str) -> tuple[bool, tuple[grpc.StatusCode, str]]:
        outbox: queue.Queue[Any] = queue.Queue()
        done = object()

        def requests() -> Iterator[ladder_pb2.PlayClientMessage]:
            yield ladder_pb2.PlayClientMessage(
                hello=ladder_pb2.PlayHello(
                    bot=self.bot_name, label=self.label, version_label=self.version_label
                )
            )
            while True:
                item = outbox.get()
                if item is done:
                    return
                yield item

        welcomed = False
        channel = grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
        try:
            stub = ladder_pb2_grpc.LadderStub(channel)
            call = stub.Play(requests(), metadata=(("authorization", f"Bearer {self.token}"),))
            self._call = call
            for message in call:
                kind = message.WhichOneof("kind")
                if kind == "welcome":
                    welcomed = True
                    self.streams += 1
                    log.info(
                        "connected to %s as %s (stream %s)",
                        address, message.welcome.bot, message.welcome.stream_id,
                    )  # fmt: skip
                    if self.on_welcome is not None:
                        self.on_welcome(message.welcome)
                elif kind == "ping":
                    outbox.put(ladder_pb2.PlayClientMessage(pong=message.ping))
                elif kind == "handshake":
                    outbox.put(self._handshake(message.handshake))
                elif kind == "decision":
                    self.pool.submit(self._decide, message.decision, outbox)
                elif kind == "match_end":
                    self._match_end(message.match_end)
                elif kind == "notice":  # the ladder stops playing the bot: it says why
                    log.error("the ladder says %s: %s", message.notice.code, message.notice.reason)
            return welcomed, (grpc.StatusCode.OK, "the server ended the stream")
        except grpc.RpcError as exc:
            code = exc.code() if hasattr(exc, "code") else grpc.StatusCode.UNKNOWN
            details = exc.details() if hasattr(exc, "details") else str(exc)
            return welcomed, (code, details or "")
        finally:
            outbox.put(done)
            self._call = None
            channel.close()

    def _handshake(self, hs: ladder_pb2.PlayHandshake) -> ladder_pb2.PlayClientMessage:
        reply = self.service.Handshake(hs.request, _DecisionContext())  # type: ignore[arg-type]
        log.info("match %d: playing seat %d", hs.match_id, hs.seat)
        return ladder_pb2.PlayClientMessage(
            handshake=ladder_pb2.PlayHandshakeReply(correlation_id=hs.correlation_id, reply=reply)
        )

    def _decide(self, decision: ladder_pb2.PlayDecision, outbox: queue.Queue[Any]) -> None:
        answer = ladder_pb2.PlayDecisionReply(correlation_id=decision.correlation_id)
        try:
            answer.reply.CopyFrom(self.service.Act(decision.request, _DecisionContext()))  # type: ignore[arg-type]
        except _Aborted as exc:
            answer.error = exc.details
        except Exception as exc:  # Act turns act's errors into an abort; this is a last guard
            answer.error = f"bot error: {type(exc).__name__}: {exc}"
        outbox.put(ladder_pb2.PlayClientMessage(decision=answer))

    def _match_end(self, end: ladder_pb2.PlayMatchEnd) -> None:
        rating = (
            f", rating {end.rating_before:.1f} -> {end.rating_after:.1f}"
            if end.rating_after
            else ""
        )
        log.info(
            "match %d %s: seat %d rank %d of %d%s%s",
            end.match_id, end.status.lower(), end.seat, end.rank, end.seats, rating,
            f" (forfeited: {end.forfeit_reason})" if end.forfeited else "",
        )  # fmt: skip
        if self.on_match_end is not None:
            from google.protobuf.json_format import MessageToDict

            self.on_match_end(MessageToDict(end, preserving_proto_field_name=True))


def connect(
    bot: Any = None,
    ladder: str = "127.0.0.1:50052",
    *,
    token: str,
    bot_name: str,
    name: str = "bot",
    version: str = "0",
    factory: Callable[[str, int], Any] | None = None,
    label: str = "",
    version_label: str = "",
    max_backoff_s: float = 30.0,
    install_signals: bool = True,
    on_match_end: Callable[[dict[str, Any]], None] | None = None,
) -> int:
    """Play ``bot`` (a function or an object with ``.act``, as for ``serve``) as the
    connected bot ``bot_name`` until SIGTERM/SIGINT; returns 0, or 2 when the ladder
    refused the stream for good (bad token, someone else's bot, not a connected bot,
    a suspended one: the reason is logged).

    ``version_label`` names the version this code is (e.g. its git commit hash): a
    label the bot has not used before is a new version on the ladder, with its own
    rating entry, lineage row and version comparisons; empty keeps the current one.
    ``label`` is only a note for the bot's page (which machine)."""
    if not logging.getLogger().handlers:
        serving.configure_logging()
    service = BotService(bot, factory=factory, name=name, version=version)
    connection = Connection(
        service,
        ladder=ladder,
        token=token,
        bot_name=bot_name,
        label=label,
        version_label=version_label,
        max_backoff_s=max_backoff_s,
        on_match_end=on_match_end,
    )
    if install_signals:

        def on_signal(signum: int, _frame: Any) -> None:
            log.info("received %s: closing the stream", signal.Signals(signum).name)
            connection.stop()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
    code = connection.run()
    log.info("stopped after %d decisions on %d streams", service.decisions, connection.streams)
    return code


def add_connect_args(p: argparse.ArgumentParser) -> None:
    """``--connect LADDER --token T --bot NAME`` for a bot script that can do both ways."""
    p.add_argument("--connect", metavar="HOST:PORT[,HOST:PORT]", help="connect out to a ladder")
    p.add_argument("--token", help="API token (default: $DIGDOWN_TOKEN)")
    p.add_argument("--bot", help="name of your connected bot on the ladder")
    p.add_argument(
        "--version-label",
        default="",
        help="the version this code is (e.g. a git hash): a new label is a new version",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m digdown.connect --connect HOST:PORT --bot NAME``: the random bot, connected
    (a quick check that a token and a bot work)."""
    import os

    p = argparse.ArgumentParser(description=main.__doc__)
    add_connect_args(p)
    p.add_argument("--log-level", default="INFO")
    args = p.parse_args(argv)
    serving.configure_logging(args.log_level)
    token = args.token or os.environ.get("DIGDOWN_TOKEN", "")
    if not (args.connect and args.bot and token):
        p.error("--connect, --bot and a token (--token or $DIGDOWN_TOKEN) are needed")
    rng = random.Random(0)
    return connect(
        lambda _obs, legal: rng.randrange(len(legal)),
        ladder=args.connect,
        token=token,
        bot_name=args.bot,
        name="random",
        version_label=args.version_label,
    )


if __name__ == "__main__":
    raise SystemExit(main())
