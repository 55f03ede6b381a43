"""The rules engine as a gRPC service: `python -m engine.server --listen 127.0.0.1:50051`.

Live games stay in this process's memory (engine/sessions.py); the service adds
what a network needs: status codes with short human messages instead of
tracebacks (every message cleaned and bounded: it travels in a trailer),
control of each game by the token its creator got, limits (threads,
concurrent calls, message sizes, live games in all and per client, idle
games, replay verifications on child processes: engine/verify_pool.py), health and
reflection outside the call limit, and a graceful stop on
SIGTERM/SIGINT so a draining engine reports NOT_SERVING before it goes away.
"""

from __future__ import annotations

# First of all: grpcio reads its I/O settings when it is imported (digdown.game_io).
import digdown.game_io  # isort: skip
import argparse
import contextlib
import functools
import logging
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import grpc

from digdown import serving, text, wire
from digdown.rulesets import ruleset_response
from digdown.v1 import engine_pb2, engine_pb2_grpc, game_pb2
from engine import metrics, sessions, verify_pool
from engine import rules as rules_build
from engine.rules import RULESETS, GameConfig
from engine.ruleset_json import ruleset_json
from telemetry.logs import json_wanted, use_json_on_root
from telemetry.metrics import serve as serve_metrics
from telemetry.rpc import MetricsInterceptor

log = logging.getLogger("engine.server")

SERVICE_NAME = engine_pb2.DESCRIPTOR.services_by_name["Engine"].full_name
R = TypeVar("R")


def _answer(name: str, fn: Callable[[], R], context: grpc.ServicerContext) -> R:
    """``fn()``, or its failure as a gRPC status with a message (never a traceback)."""
    try:
        return fn()
    except sessions.ServiceError as exc:
        code, message = exc.code, exc.message
    except wire.WireError as exc:
        code, message = grpc.StatusCode.INVALID_ARGUMENT, str(exc)
    except Exception as exc:
        log.exception("%s failed unexpectedly", name)
        code, message = grpc.StatusCode.INTERNAL, f"internal error in {name}: {exc}"
    # Messages may quote what the caller sent: one bounded line, in the log and the trailer.
    message = text.clean(message, text.MESSAGE_MAX)
    log.info("%s -> %s: %s", name, code.name, message)
    context.abort(code, message)
    raise AssertionError("unreachable: context.abort raises")


def _rpc(method: Callable[..., R]) -> Callable[..., R]:
    """A unary handler whose every failure is a gRPC status with a message."""

    @functools.wraps(method)
    def wrapper(self: EngineService, request: Any, context: grpc.ServicerContext) -> R:
        return _answer(method.__name__, lambda: method(self, request, context), context)

    return wrapper


class EngineService(engine_pb2_grpc.EngineServicer):
    """digdown.v1.Engine over a SessionStore."""

    def __init__(
        self, store: sessions.SessionStore, verifier: verify_pool.VerifyPool | None = None
    ) -> None:
        self.store = store
        # Replay verification off the call threads, bounded (engine/verify_pool.py).
        self.verifier = verifier or verify_pool.VerifyPool(processes=1, admitted=4)
        # Taken around each message of a Play stream (EngineServer: one of its running
        # slots), so streams idle between steps never hold one.
        self.message_slot: Callable[[grpc.ServicerContext], contextlib.AbstractContextManager[Any]]
        self.message_slot = lambda context: contextlib.nullcontext()

    def _game(self, request: Any) -> sessions.Session:
        """The session a request names, if it carries the session's control token."""
        return self.store.get(request.game_id, request.control_token)

    @staticmethod
    def _guard(game: sessions.Session, fn: Callable[[], R]) -> R:
        """Run `fn` under the game's lock; an unexpected engine error marks the game broken."""
        with game.lock:
            try:
                return fn()
            except (sessions.ServiceError, wire.WireError):
                raise
            except Exception as exc:
                game.broken = f"{type(exc).__name__}: {exc}"
                raise

    @_rpc
    def NewGame(
        self, request: engine_pb2.NewGameRequest, context: grpc.ServicerContext
    ) -> engine_pb2.NewGameResponse:
        return self._new_game(request, context)[1]

    def _new_game(
        self, request: engine_pb2.NewGameRequest, context: grpc.ServicerContext
    ) -> tuple[sessions.Session, engine_pb2.NewGameResponse]:
        if not request.HasField("config"):
            raise sessions.invalid("NewGameRequest needs a config")
        game, events = self.store.create(
            request.config, list(request.seats), client=serving.peer_host(context.peer())
        )
        response = engine_pb2.NewGameResponse(
            game_id=game.game_id,
            control_token=game.control_token,
            events=wire.events_to_proto(events),
        )
        self._guard(game, lambda: game.fill_next(response))
        return game, response

    def Play(
        self, request_iterator: Iterator[engine_pb2.PlayRequest], context: grpc.ServicerContext
    ) -> Iterator[engine_pb2.PlayResponse]:
        """One game over one stream: new_game, steps, get_replay; the game ends with it.

        Each request is answered like its unary call, with the same errors (which end
        the stream); the game is closed when the stream ends, however it ends.
        """
        game: sessions.Session | None = None
        try:
            for request in request_iterator:
                with self.message_slot(context):
                    kind = request.WhichOneof("request")
                    if kind == "new_game":
                        if game is not None:
                            _answer("Play", self._second_game, context)
                        new = functools.partial(self._new_game, request.new_game, context)
                        game, created = _answer("Play", new, context)
                        response = engine_pb2.PlayResponse(new_game=created)
                    else:
                        one = functools.partial(self._play_one, game, request, kind)
                        response = _answer("Play", one, context)
                yield response
        finally:
            if game is not None and self.store.close(game.game_id, game.control_token):
                log.info("game %s closed with its stream", game.game_id)

    @staticmethod
    def _second_game() -> None:
        raise sessions.invalid("a Play stream plays one game: new_game comes once, first")

    def _play_one(
        self, game: sessions.Session | None, request: engine_pb2.PlayRequest, kind: str | None
    ) -> engine_pb2.PlayResponse:
        if game is None:
            raise sessions.invalid("the first message of a Play stream must be new_game")
        game = self.store.get(game.game_id, game.control_token)  # expired games stay gone
        if kind == "step":
            step = request.step
            response = engine_pb2.PlayResponse()
            # Written in place: the answer (a decision's observation) is not copied again.
            answer = response.step
            self._guard(game, lambda: sessions.step(game, step, answer))
            return response
        if kind == "get_replay":
            self._check_over(game)
            replay = self._guard(game, game.replay)
            return engine_pb2.PlayResponse(replay=engine_pb2.GetReplayResponse(replay=replay))
        raise sessions.invalid("a PlayRequest needs new_game, step or get_replay")

    @_rpc
    def Step(
        self, request: engine_pb2.StepRequest, context: grpc.ServicerContext
    ) -> engine_pb2.StepResponse:
        game = self._game(request)
        return self._guard(game, lambda: sessions.step(game, request))

    @_rpc
    def GetState(
        self, request: engine_pb2.GetStateRequest, context: grpc.ServicerContext
    ) -> engine_pb2.GetStateResponse:
        game = self._game(request)

        def build() -> engine_pb2.GetStateResponse:
            response = engine_pb2.GetStateResponse()
            game.fill_next(response)
            if request.HasField("observer"):
                n = len(game.state.seats)
                if not 0 <= request.observer < n:
                    raise sessions.invalid(
                        f"observer {request.observer} is not a seat (0..{n - 1})"
                    )
                obs = game.state.observation(request.observer)
                response.observation.CopyFrom(wire.observation_to_proto(obs))
            return response

        return self._guard(game, build)

    def _finished(self, request: Any) -> sessions.Session:
        game = self._game(request)
        self._check_over(game)
        return game

    @staticmethod
    def _check_over(game: sessions.Session) -> None:
        if not game.state.is_over:
            raise sessions.precondition(
                "the game is not over; its record holds hidden faces and is served after the end"
            )

    @_rpc
    def GetRecord(
        self, request: engine_pb2.GetRecordRequest, context: grpc.ServicerContext
    ) -> engine_pb2.GetRecordResponse:
        game = self._finished(request)
        return self._guard(
            game,
            lambda: engine_pb2.GetRecordResponse(record=wire.record_to_proto(game.state.record)),
        )

    @_rpc
    def GetReplay(
        self, request: engine_pb2.GetReplayRequest, context: grpc.ServicerContext
    ) -> engine_pb2.GetReplayResponse:
        game = self._finished(request)
        return self._guard(game, lambda: engine_pb2.GetReplayResponse(replay=game.replay()))

    @_rpc
    def CloseGame(
        self, request: engine_pb2.CloseGameRequest, context: grpc.ServicerContext
    ) -> engine_pb2.CloseGameResponse:
        closed = self.store.close(request.game_id, request.control_token)
        if closed:
            log.info("game %s closed", request.game_id)
        return engine_pb2.CloseGameResponse(closed=closed)

    @_rpc
    def VerifyReplay(
        self, request: engine_pb2.VerifyReplayRequest, context: grpc.ServicerContext
    ) -> engine_pb2.VerifyReplayResponse:
        response = self.verifier.verify(request, context.time_remaining())
        log.info("VerifyReplay: ok=%s %s", response.ok, response.first_difference)
        return response

    @_rpc
    def GetRuleset(
        self, request: game_pb2.GetRulesetRequest, context: grpc.ServicerContext
    ) -> game_pb2.GetRulesetResponse:
        """The ruleset document, generated from the code this engine plays by."""
        try:
            context.send_initial_metadata((("digdown-rules-build", rules_build.BUILD),))
            return ruleset_response(request.ruleset, GameConfig().ruleset, ruleset_json, RULESETS)
        except KeyError as exc:
            raise sessions.ServiceError(grpc.StatusCode.NOT_FOUND, exc.args[0]) from None


# --- process ------------------------------------------------------------------


class EngineServer(serving.GrpcServer):
    """A bound engine server: the grpc server, its health servicer and the session store."""

    def __init__(
        self,
        listen: str = "127.0.0.1:50051",
        *,
        max_workers: int = 16,
        max_concurrent_rpcs: int = 64,
        max_message_bytes: int = 16 * 1024 * 1024,
        idle_timeout_s: float = 600.0,
        max_games: int = 10_000,
        max_games_per_client: int = 1_000,
        reflection_enabled: bool = True,
        max_streams: int = 256,
        observers: Sequence[grpc.ServerInterceptor] = (),
        verify_processes: int = 1,
        max_verifications: int = 4,
    ) -> None:
        """``verify_processes`` child processes verify replays, ``max_verifications`` calls
        at most in progress or waiting for one (never more than half the running slots,
        ``max_workers``: steps always find one); more are refused (RESOURCE_EXHAUSTED)."""
        self.store = sessions.SessionStore(
            idle_timeout_s=idle_timeout_s,
            max_games=max_games,
            max_games_per_client=max_games_per_client,
        )
        self.verifier = verify_pool.VerifyPool(
            processes=verify_processes,
            admitted=min(max_verifications, max(1, max_workers // 2)),
        )
        service = EngineService(self.store, self.verifier)
        super().__init__(
            listen,
            services=[SERVICE_NAME],
            register=lambda server: engine_pb2_grpc.add_EngineServicer_to_server(service, server),
            max_workers=max_workers,
            max_concurrent_rpcs=max_concurrent_rpcs,
            max_receive_bytes=max_message_bytes,
            thread_name_prefix="engine-rpc",
            reflection_enabled=reflection_enabled,
            # A Play stream lives as long as its game and holds a thread, idle between
            # steps; each step takes one of the `max_workers` slots like a unary call.
            max_streams=max_streams,
            streamed=[f"/{SERVICE_NAME}/Play"],
            # Verifications beyond their bound are refused before the call limit.
            observers=[
                *observers,
                verify_pool.VerifyAdmission(self.verifier, f"/{SERVICE_NAME}/VerifyReplay"),
            ],
            # Streams opened and left silent (a bot that reached the engine, a lost
            # client) go when an idle game would.
            stream_idle_s=idle_timeout_s,
            # One reply per request, in order: served on threads of their own, each
            # waking once per message (digdown.stream_server).
            exchange_streams=True,
        )
        service.message_slot = self.limit.running_slot
        self._stop = threading.Event()
        self._reaper = threading.Thread(target=self._reap, name="engine-reaper", daemon=True)

    def start(self) -> None:
        super().start()
        self._reaper.start()
        log.info(
            "digdown-engine listening on %s (rules core: %s build, %s; %s)",
            self.address,
            rules_build.BUILD,
            rules_build.BUILD_REASON,
            digdown.game_io.CHOSEN,
        )
        if warning := rules_build.build_warning():
            log.warning("%s", warning)

    def _reap(self) -> None:
        """Drop idle games now and then, so abandoned matches do not pile up in memory."""
        period = max(0.05, min(30.0, self.store.idle_timeout_s / 4))
        while not self._stop.wait(period):
            self.store.expire()

    def stop(self, grace_s: float) -> None:
        """Report NOT_SERVING, refuse new calls, let running ones finish for `grace_s`."""
        self._stop.set()
        log.info(
            "stopping: %d live games dropped after up to %.1f s grace", len(self.store), grace_s
        )
        super().stop(grace_s)
        self.verifier.close()
        log.info("stopped")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="digdown-engine", description=__doc__.splitlines()[0])
    p.add_argument("--listen", default="127.0.0.1:50051", help="host:port (port 0 = any free)")
    p.add_argument("--port-file", type=Path, help="write the bound port here once listening")
    p.add_argument("--max-workers", type=int, default=16, help="calls executing at once")
    p.add_argument(
        "--max-concurrent-rpcs",
        type=int,
        default=64,
        help="calls admitted at once (executing or queued); more: RESOURCE_EXHAUSTED."
        " Health and reflection are not counted",
    )
    p.add_argument("--max-message-mb", type=float, default=16.0, help="max message size, MiB")
    p.add_argument(
        "--max-streams",
        type=int,
        default=256,
        help="Play streams (one per game, each holding an idle thread) open at once;"
        " more are refused and those clients play by unary calls",
    )
    p.add_argument(
        "--verify-processes",
        type=int,
        default=1,
        help="child processes verifying replays (at nice 10), so a flood of VerifyReplay"
        " never starves health and the games' steps",
    )
    p.add_argument(
        "--max-verifications",
        type=int,
        default=4,
        help="VerifyReplay calls in progress or queued at once (at most half of"
        " --max-workers); more: RESOURCE_EXHAUSTED",
    )
    p.add_argument("--idle-timeout", type=float, default=600.0, help="forget idle games after s")
    p.add_argument("--max-games", type=int, default=10_000, help="live games at most")
    p.add_argument(
        "--max-games-per-client",
        type=int,
        default=1_000,
        help="live games one client (peer address) may hold; see docs/security.md",
    )
    p.add_argument("--grace", type=float, default=5.0, help="seconds for running calls at stop")
    p.add_argument("--no-reflection", action="store_true", help="do not serve reflection")
    p.add_argument("--log-level", default="INFO")
    p.add_argument(
        "--metrics-port",
        type=int,
        default=None,
        help="serve Prometheus /metrics on this port (default: LADDER_METRICS_PORT; 0: off)",
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    serving.configure_logging(args.log_level)
    if json_wanted():
        use_json_on_root()
    try:
        engine = EngineServer(
            args.listen,
            max_workers=args.max_workers,
            max_concurrent_rpcs=args.max_concurrent_rpcs,
            max_message_bytes=int(args.max_message_mb * 1024 * 1024),
            idle_timeout_s=args.idle_timeout,
            max_games=args.max_games,
            max_games_per_client=args.max_games_per_client,
            reflection_enabled=not args.no_reflection,
            max_streams=args.max_streams,
            observers=[MetricsInterceptor()],
            verify_processes=args.verify_processes,
            max_verifications=args.max_verifications,
        )
    except OSError as exc:
        log.error("%s", exc)
        return 2
    serve_metrics(args.metrics_port, extra=metrics.GamesOpen(lambda: len(engine.store)))
    serving.serve_until_signalled(engine, grace_s=args.grace, port_file=args.port_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
