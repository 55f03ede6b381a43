"""The rules engine as a gRPC service: `python -m engine.server --listen 127.0.0.1:50051`.

Live games stay in this process's memory (engine/games.py); the service adds
what a network needs: status codes with human messages instead of
tracebacks, limits (threads, concurrent calls, message sizes, live games,
idle games), health and reflection, and a graceful stop on SIGTERM/SIGINT
so a draining engine reports NOT_SERVING before it goes away.
"""

from __future__ import annotations

import argparse
import functools
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent import futures
from pathlib import Path
from typing import Any, TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from engine import games, verify, wire
from protos.digdown.v1 import engine_pb2, engine_pb2_grpc

log = logging.getLogger("engine.server")

SERVICE_NAME = engine_pb2.DESCRIPTOR.services_by_name["Engine"].full_name
R = TypeVar("R")


def _rpc(method: Callable[..., R]) -> Callable[..., R]:
    """Turn every failure of a handler into a gRPC status with a message (never a traceback)."""

    @functools.wraps(method)
    def wrapper(self: EngineService, request: Any, context: grpc.ServicerContext) -> R:
        name = method.__name__
        try:
            return method(self, request, context)
        except games.ServiceError as exc:
            log.info("%s -> %s: %s", name, exc.code.name, exc.message)
            context.abort(exc.code, exc.message)
        except wire.WireError as exc:
            log.info("%s -> INVALID_ARGUMENT: %s", name, exc)
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except Exception as exc:
            log.exception("%s failed unexpectedly", name)
            context.abort(grpc.StatusCode.INTERNAL, f"internal error in {name}: {exc}")
        raise AssertionError("unreachable: context.abort raises")

    return wrapper


class EngineService(engine_pb2_grpc.EngineServicer):
    """digdown.v1.Engine over a GameStore."""

    def __init__(self, store: games.GameStore) -> None:
        self.store = store

    def _game(self, game_id: str) -> games.Game:
        if not game_id:
            raise games.invalid("game_id is empty")
        return self.store.get(game_id)

    @staticmethod
    def _guard(game: games.Game, fn: Callable[[], R]) -> R:
        """Run `fn` under the game's lock; an unexpected engine error marks the game broken."""
        with game.lock:
            try:
                return fn()
            except (games.ServiceError, wire.WireError):
                raise
            except Exception as exc:
                game.broken = f"{type(exc).__name__}: {exc}"
                raise

    @_rpc
    def NewGame(
        self, request: engine_pb2.NewGameRequest, context: grpc.ServicerContext
    ) -> engine_pb2.NewGameResponse:
        if not request.HasField("config"):
            raise games.invalid("NewGameRequest needs a config")
        game, events = self.store.create(request.config, list(request.seats))
        response = engine_pb2.NewGameResponse(
            game_id=game.game_id, events=wire.events_to_proto(events)
        )
        self._guard(game, lambda: game.fill_next(response))
        return response

    @_rpc
    def Step(
        self, request: engine_pb2.StepRequest, context: grpc.ServicerContext
    ) -> engine_pb2.StepResponse:
        game = self._game(request.game_id)
        return self._guard(game, lambda: games.step(game, request))

    @_rpc
    def GetState(
        self, request: engine_pb2.GetStateRequest, context: grpc.ServicerContext
    ) -> engine_pb2.GetStateResponse:
        game = self._game(request.game_id)

        def build() -> engine_pb2.GetStateResponse:
            response = engine_pb2.GetStateResponse()
            game.fill_next(response)
            if request.HasField("observer"):
                n = len(game.state.seats)
                if not 0 <= request.observer < n:
                    raise games.invalid(f"observer {request.observer} is not a seat (0..{n - 1})")
                obs = game.state.observation(request.observer)
                response.observation.CopyFrom(wire.observation_to_proto(obs))
            return response

        return self._guard(game, build)

    def _finished(self, game_id: str) -> games.Game:
        game = self._game(game_id)
        if not game.state.is_over:
            raise games.precondition(
                "the game is not over; its record holds hidden faces and is served after the end"
            )
        return game

    @_rpc
    def GetRecord(
        self, request: engine_pb2.GetRecordRequest, context: grpc.ServicerContext
    ) -> engine_pb2.GetRecordResponse:
        game = self._finished(request.game_id)
        return self._guard(
            game,
            lambda: engine_pb2.GetRecordResponse(record=wire.record_to_proto(game.state.record)),
        )

    @_rpc
    def GetReplay(
        self, request: engine_pb2.GetReplayRequest, context: grpc.ServicerContext
    ) -> engine_pb2.GetReplayResponse:
        game = self._finished(request.game_id)
        return self._guard(game, lambda: engine_pb2.GetReplayResponse(replay=game.replay()))

    @_rpc
    def CloseGame(
        self, request: engine_pb2.CloseGameRequest, context: grpc.ServicerContext
    ) -> engine_pb2.CloseGameResponse:
        closed = self.store.close(request.game_id)
        if closed:
            log.info("game %s closed", request.game_id)
        return engine_pb2.CloseGameResponse(closed=closed)

    @_rpc
    def VerifyReplay(
        self, request: engine_pb2.VerifyReplayRequest, context: grpc.ServicerContext
    ) -> engine_pb2.VerifyReplayResponse:
        response = verify.verify_request(request)
        log.info("VerifyReplay: ok=%s %s", response.ok, response.first_difference)
        return response


# --- process ------------------------------------------------------------------


def server_options(max_message_bytes: int) -> list[tuple[str, Any]]:
    """Channel arguments of the engine server (pitfalls G2, G4, G5)."""
    return [
        ("grpc.so_reuseport", 0),  # a second engine on the same port must fail, not share it
        ("grpc.max_receive_message_length", max_message_bytes),
        ("grpc.max_send_message_length", max_message_bytes),
        # Accept client keepalive pings down to every 10 s instead of GOAWAY-ing them.
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
    ]


class EngineServer:
    """A started engine server: the grpc server, its health servicer and the game store."""

    def __init__(
        self,
        listen: str = "127.0.0.1:50051",
        *,
        max_workers: int = 16,
        max_concurrent_rpcs: int = 64,
        max_message_bytes: int = 16 * 1024 * 1024,
        idle_timeout_s: float = 600.0,
        max_games: int = 10_000,
        reflection_enabled: bool = True,
    ) -> None:
        self.store = games.GameStore(idle_timeout_s=idle_timeout_s, max_games=max_games)
        self.server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="engine-rpc"),
            maximum_concurrent_rpcs=max_concurrent_rpcs,
            options=server_options(max_message_bytes),
        )
        engine_pb2_grpc.add_EngineServicer_to_server(EngineService(self.store), self.server)
        self.health = health.HealthServicer(
            experimental_non_blocking=True,
            experimental_thread_pool=futures.ThreadPoolExecutor(max_workers=1),
        )
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        if reflection_enabled:
            names = (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME)
            reflection.enable_server_reflection(names, self.server)
        host = listen.rsplit(":", 1)[0]
        try:
            self.port = self.server.add_insecure_port(listen)
        except RuntimeError:  # newer grpcio raises on a failed bind ...
            self.port = 0
        if self.port == 0:  # ... older ones returned port 0 (pitfall G5)
            raise OSError(f"cannot listen on {listen} (address in use or invalid)")
        self.address = f"{host}:{self.port}"
        self._stop = threading.Event()
        self._reaper = threading.Thread(target=self._reap, name="engine-reaper", daemon=True)

    def start(self) -> None:
        self.server.start()
        for name in ("", SERVICE_NAME):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        self._reaper.start()
        log.info("digdown-engine listening on %s", self.address)

    def _reap(self) -> None:
        """Drop idle games now and then, so abandoned matches do not pile up in memory."""
        period = max(0.05, min(30.0, self.store.idle_timeout_s / 4))
        while not self._stop.wait(period):
            self.store.expire()

    def stop(self, grace_s: float) -> None:
        """Report NOT_SERVING, refuse new calls, let running ones finish for `grace_s`."""
        self._stop.set()
        self.health.enter_graceful_shutdown()
        log.info(
            "stopping: %d live games dropped after up to %.1f s grace", len(self.store), grace_s
        )
        self.server.stop(grace_s).wait()
        log.info("stopped")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="digdown-engine", description=__doc__.splitlines()[0])
    p.add_argument("--listen", default="127.0.0.1:50051", help="host:port (port 0 = any free)")
    p.add_argument("--port-file", type=Path, help="write the bound port here once listening")
    p.add_argument("--max-workers", type=int, default=16, help="RPC threads")
    p.add_argument("--max-concurrent-rpcs", type=int, default=64, help="more: RESOURCE_EXHAUSTED")
    p.add_argument("--max-message-mb", type=float, default=16.0, help="max message size, MiB")
    p.add_argument("--idle-timeout", type=float, default=600.0, help="forget idle games after s")
    p.add_argument("--max-games", type=int, default=10_000, help="live games at most")
    p.add_argument("--grace", type=float, default=5.0, help="seconds for running calls at stop")
    p.add_argument("--no-reflection", action="store_true", help="do not serve reflection")
    p.add_argument("--log-level", default="INFO")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    try:
        engine = EngineServer(
            args.listen,
            max_workers=args.max_workers,
            max_concurrent_rpcs=args.max_concurrent_rpcs,
            max_message_bytes=int(args.max_message_mb * 1024 * 1024),
            idle_timeout_s=args.idle_timeout,
            max_games=args.max_games,
            reflection_enabled=not args.no_reflection,
        )
    except OSError as exc:
        log.error("%s", exc)
        return 2
    stop_requested = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("received %s", signal.Signals(signum).name)
        stop_requested.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    engine.start()
    if args.port_file:
        tmp = args.port_file.with_suffix(".tmp")
        tmp.write_text(f"{engine.port}\n")
        tmp.replace(args.port_file)  # atomic: readers never see a half-written port
    while not stop_requested.wait(1.0):
        pass
    started = time.monotonic()
    engine.stop(args.grace)
    log.info("exit after %.2f s shutdown", time.monotonic() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
