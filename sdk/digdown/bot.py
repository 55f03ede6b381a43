"""Bot SDK: turn one Python function into a `digdown.v1.Bot` gRPC service.

A bot author writes

    def act(observation: dict, legal_actions: list[dict]) -> dict | int: ...
    serve(act, listen="127.0.0.1:50061", name="mybot", version="1")

and gets the whole protocol of protos/digdown/v1/bot.proto: Handshake, Act,
ActStream (protocol 2: one stream per seat and game, negotiated in the
handshake), a health service (`grpc.health.v1`, service "digdown.v1.Bot"),
logs, and a graceful stop on SIGTERM/SIGINT.

One access style for everything a bot reads: the observation and every legal
action are plain dicts keyed by the proto field names (docs/engine-api.md;
`digdown.types` has their TypedDicts), so `observation["phase"]` and
`action["kind"]`, `action["passage"]`. The answer is one of the legal action
dicts (or an equal dict) or its index in `legal_actions`.

Why an SDK at all: the protocol has traps that every author would otherwise
meet alone (message conversion, binding silently failing, never exiting on
SIGTERM, exceptions turning into opaque errors). Here an exception in `act`
becomes an INTERNAL status with the exception's text, which the match runner
records as the fault's reason, so the author can see why their bot faulted.

Stateful bots: pass `factory=` instead of a bot; it is called once per
(game_id, seat) and the instance is kept for that game (at most
`max_games` games are remembered, least recently used dropped first).
"""

from __future__ import annotations

# First of all: grpcio reads its I/O settings when it is imported (digdown.game_io).
import digdown.game_io  # isort: skip
import argparse
import collections
import contextlib
import inspect
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import grpc

from digdown import PROTOCOL_VERSION, serving, wire
from digdown.proto_codec import lazy_message_to_dict
from digdown.types import Action, Event, Observation
from digdown.v1 import bot_pb2, bot_pb2_grpc, game_pb2

log = logging.getLogger("digdown.bot")

SERVICE_NAME = bot_pb2.DESCRIPTOR.services_by_name["Bot"].full_name
# An ActStream without a request for this long is cancelled (far above a game's longest
# pause between two decisions of one seat: the other seats' deadlines and banks).
STREAM_IDLE_S = 600.0


@dataclass(frozen=True)
class Context:
    """What a decision request says besides the observation (for bots that want it).

    A bot's `act` receives it when it declares a `context` parameter.
    """

    game_id: str
    seat: int
    ply: int
    deadline_ms: int
    time_left_ms: int
    events: list[Event] = field(default_factory=list)


# What `act` may return: one of the legal action dicts (or an equal dict), or its index.
Answer = Action | dict[str, Any] | int
ActFn = Callable[..., Answer]


def _act_callable(bot: object) -> ActFn:
    """The `act` of a bot object, or the bot itself when it is a function."""
    fn = getattr(bot, "act", bot)
    if not callable(fn):
        raise TypeError(f"a bot is a function act(observation, legal) or has .act, got {bot!r}")
    return fn


def _wants_context(fn: ActFn) -> bool:
    try:
        return "context" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def answer_to_proto(answer: Answer, legal: list[Action]) -> game_pb2.Action:
    """Whatever `act` returned -> an `Action` message (ValueError if unusable).

    Legality is the engine's to judge (an illegal action is a fault with the
    engine's reason); here only the shape is checked.
    """
    msg = game_pb2.Action()
    answer_into(answer, legal, msg)
    return msg


def answer_into(answer: Answer, legal: list[Action], msg: game_pb2.Action) -> None:
    """`answer_to_proto` written into the empty ``msg`` (the reply's own field, which then
    needs no copy of the action)."""
    if isinstance(answer, bool):
        raise ValueError(f"act returned {answer!r}, not an action")
    if isinstance(answer, int):
        if not 0 <= answer < len(legal):
            raise ValueError(f"act returned index {answer}, but there are {len(legal)} actions")
        answer = legal[answer]
    try:
        wire.action_into(answer, msg)
    except wire.WireError as exc:
        raise ValueError(f"act returned an unusable action {answer!r}: {exc}") from None


class BotService(bot_pb2_grpc.BotServicer):
    """The `Bot` servicer around one act function (or one per game via a factory)."""

    def __init__(
        self,
        bot: object = None,
        *,
        factory: Callable[[str, int], object] | None = None,
        name: str = "bot",
        version: str = "0",
        max_games: int = 64,
    ) -> None:
        if (bot is None) == (factory is None):
            raise TypeError("give exactly one of bot= or factory=")
        self.name = name
        self.version = version
        self._fn: tuple[ActFn, bool] | None = None
        if bot is not None:
            fn = _act_callable(bot)
            self._fn = (fn, _wants_context(fn))
        self._factory = factory
        self._instances: collections.OrderedDict[tuple[str, int], tuple[ActFn, bool]] = (
            collections.OrderedDict()
        )
        self._max_games = max_games
        self._lock = threading.Lock()
        self.decisions = 0
        # Taken around each decision of a stream (BotServer: one of its running slots),
        # so streams idle between decisions never hold a slot.
        self.decision_slot: Callable[[grpc.ServicerContext], contextlib.AbstractContextManager[Any]]
        self.decision_slot = lambda context: contextlib.nullcontext()

    def _fn_for(self, game_id: str, seat: int) -> tuple[ActFn, bool]:
        """The act function for this game and seat, and whether it takes a context."""
        if self._fn is not None:
            return self._fn
        assert self._factory is not None
        key = (game_id, seat)
        with self._lock:
            found = self._instances.get(key)
            if found is not None:
                self._instances.move_to_end(key)
                return found
        fn = _act_callable(self._factory(game_id, seat))
        found = (fn, _wants_context(fn))
        with self._lock:
            self._instances[key] = found
            while len(self._instances) > self._max_games:
                self._instances.popitem(last=False)
        return found

    def Handshake(
        self, request: bot_pb2.HandshakeRequest, context: grpc.ServicerContext
    ) -> bot_pb2.HandshakeReply:
        log.info("handshake: runner speaks protocol %d", request.protocol_version)
        # The highest version both speak: an older runner (1) gets unary Act calls.
        chosen = min(max(1, request.protocol_version), PROTOCOL_VERSION)
        return bot_pb2.HandshakeReply(name=self.name, version=self.version, protocol_version=chosen)

    def Act(
        self, request: bot_pb2.DecisionRequest, context: grpc.ServicerContext
    ) -> bot_pb2.DecisionReply:
        return self._decide(request, context)

    def ActStream(
        self, request_iterator: Iterator[bot_pb2.DecisionRequest], context: grpc.ServicerContext
    ) -> Iterator[bot_pb2.DecisionReply]:
        """Protocol 2: one reply per request, in order; an error ends the stream (a fault)."""
        for request in request_iterator:
            with self.decision_slot(context):
                reply = self._decide(request, context)
            yield reply

    def _decide(
        self, request: bot_pb2.DecisionRequest, context: grpc.ServicerContext
    ) -> bot_pb2.DecisionReply:
        """One decision: the request as dicts -> `act` -> the reply (INTERNAL on an error)."""
        started = time.monotonic()
        try:
            # Filled in on first use: a bot that never reads the passages or players
            # does not pay for their conversion (proto_codec.LazyDict).
            observation = cast(Observation, lazy_message_to_dict(request.observation))
            legal = [wire.action_from_proto(a) for a in request.legal_actions]
            fn, wants_context = self._fn_for(request.game_id, request.seat)
            if wants_context:
                ctx = Context(
                    game_id=request.game_id,
                    seat=request.seat,
                    ply=request.ply,
                    deadline_ms=request.deadline_ms,
                    time_left_ms=request.time_left_ms,
                    events=[wire.event_from_proto(e) for e in request.events],
                )
                answer = fn(observation, legal, context=ctx)
            else:
                answer = fn(observation, legal)
            reply = bot_pb2.DecisionReply()
            action = reply.action
            answer_into(answer, legal, action)  # built in the reply: not copied into it
        except Exception as exc:
            log.exception("act failed (game %s, ply %d)", request.game_id, request.ply)
            context.abort(grpc.StatusCode.INTERNAL, f"bot error: {type(exc).__name__}: {exc}")
            raise AssertionError("unreachable: abort raises") from exc
        self.decisions += 1
        if log.isEnabledFor(logging.DEBUG):  # its arguments cost more than the check
            log.debug(
                "game %s ply %d seat %d -> %s in %.1f ms",
                request.game_id,
                request.ply,
                request.seat,
                action.WhichOneof("kind"),
                (time.monotonic() - started) * 1000,
            )
        return reply


class BotServer(serving.GrpcServer):
    """A bound (not yet started) bot server: grpc server + health, on one address."""

    def __init__(
        self, service: BotService, listen: str, *, max_workers: int = 4, max_streams: int = 64
    ) -> None:
        self.service = service
        # Bots are asked one decision at a time per game; a few threads serve
        # several concurrent games without letting a flood pile up (slow clients
        # would hold every thread). A game's stream holds a thread (idle between
        # decisions) but computes in one of the same `max_workers` slots; past
        # `max_streams` games the runner is refused the stream and asks by unary Act.
        super().__init__(
            listen,
            services=[SERVICE_NAME],
            register=lambda server: bot_pb2_grpc.add_BotServicer_to_server(service, server),
            max_workers=max_workers,
            max_concurrent_rpcs=max_workers * 4,
            thread_name_prefix="bot-rpc",
            reflection_enabled=False,
            max_streams=max_streams,
            streamed=[f"/{SERVICE_NAME}/ActStream"],
            # A runner's stream gets a request at every decision of its seat; one silent
            # this long (someone else's, left open) would hold a thread and a slot.
            stream_idle_s=STREAM_IDLE_S,
            # One reply per request, in order: served on threads of their own, each
            # waking once per message (digdown.stream_server).
            exchange_streams=True,
        )
        service.decision_slot = self.limit.running_slot

    def start(self) -> None:
        super().start()
        log.info(
            "bot %s %s listening on %s (%s)",
            self.service.name,
            self.service.version,
            self.address,
            digdown.game_io.CHOSEN,
        )

    def stop(self, grace_s: float = 2.0) -> None:
        """NOT_SERVING first (so a runner's health check sees it), then drain for `grace_s`."""
        super().stop(grace_s)
        log.info("bot stopped after %d decisions", self.service.decisions)


def serve(
    bot: object = None,
    listen: str = "127.0.0.1:50061",
    *,
    name: str = "bot",
    version: str = "0",
    factory: Callable[[str, int], object] | None = None,
    port_file: Path | str | None = None,
    grace_s: float = 2.0,
    max_workers: int = 4,
    max_streams: int = 64,
    install_signals: bool = True,
) -> int:
    """Serve `bot` (a function or an object with `.act`) until SIGTERM/SIGINT; returns 0.

    `listen` is `host:port` (port 0 picks a free one) or `unix:/path/bot.sock`.
    `port_file`, when given, receives the bound port once the server listens
    (written atomically), which is how tests and the runner find a bot on port 0.
    """
    if not logging.getLogger().handlers:
        serving.configure_logging()
    service = BotService(bot, factory=factory, name=name, version=version)
    try:
        server = BotServer(service, listen, max_workers=max_workers, max_streams=max_streams)
    except OSError as exc:
        log.error("%s", exc)
        return 2
    serving.serve_until_signalled(
        server, grace_s=grace_s, port_file=port_file, install_signals=install_signals
    )
    return 0


def parse_args(argv: Sequence[str] | None, description: str = "") -> argparse.Namespace:
    """The command line every bot script shares (`--listen`, `--port-file`, ...)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument(
        "--listen", default="127.0.0.1:50061", help="host:port (0 = any free) or unix:/path"
    )
    p.add_argument("--port-file", type=Path, help="write the bound port here once listening")
    p.add_argument("--name", help="name reported in the handshake")
    p.add_argument("--seed", type=int, default=0, help="seed of the bot's own randomness")
    p.add_argument("--log-level", default="INFO")
    args = p.parse_args(argv)
    serving.configure_logging(args.log_level)
    return args


def seeded_rng_factory(
    cls: Callable[[random.Random], object], seed: int
) -> Callable[[str, int], object]:
    """A `factory=` for `serve`: one `cls(rng)` per (game, seat), its rng seeded reproducibly.

    The seed mixes the bot's `--seed` with the seat only (with a stable hash,
    not `hash()`, which is salted per process), not with the game id: the same
    match (same engine seed, same bots) then plays out the same way again,
    which makes a reported game reproducible.
    """
    import zlib

    def make(game_id: str, seat: int) -> object:
        return cls(random.Random(zlib.crc32(f"{seed}:{seat}".encode())))

    return make


def house_bot_main(
    cls: Callable[[random.Random], object],
    name: str,
    description: str,
    argv: Sequence[str] | None = None,
) -> int:
    """The whole `main` of a bot script built from a class: one `cls(rng)` per (game, seat).

    `cls` takes a seeded `random.Random` and has `act(observation, legal_actions)`.
    The house bots (examples/) differ only in that class and their name, so their
    command line and serving live here once.
    """
    args = parse_args(argv, description)
    return serve(
        factory=seeded_rng_factory(cls, args.seed),
        listen=args.listen,
        name=args.name or name,
        version="1",
        port_file=args.port_file,
    )
