"""Live games of the engine service: one `State` per game id, guarded by a lock.

Kept apart from the gRPC plumbing (engine/server.py) so that the rules of
the service - forced plays, seat checks, retry-safe `ply`, idle expiry, what
may be shown before the end - are plain Python with plain errors.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import grpc

from digdown import serving, wire
from digdown.v1 import engine_pb2, game_pb2
from engine.rules import Action, GameConfig, IllegalAction, State, new_game

log = logging.getLogger("engine.sessions")

REPLAY_FORMAT = wire.REPLAY_FORMAT
ServiceError = serving.StatusError
"""An error to report to the caller as a gRPC status with a human message."""


def invalid(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, message)


def precondition(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.FAILED_PRECONDITION, message)


@dataclass
class Game:
    """One live game and the service's bookkeeping around the rules state."""

    game_id: str
    state: State
    seats: list[game_pb2.SeatInfo]
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_used: float = field(default_factory=time.monotonic)
    # Per record entry: think time, and the span of `state.log` it produced.
    think_ms: list[int] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    # The last Step request (serialized) and its answer, for retry-safe Steps.
    last_request: bytes | None = None
    last_response: engine_pb2.StepResponse | None = None
    # Set when the rules library raised something unexpected: the game is unusable.
    broken: str = ""

    @property
    def ply(self) -> int:
        return len(self.state.record["entries"])

    def play(self, fn: Any, *args: Any, think_ms: int = 0) -> list[dict[str, Any]]:
        """Run one recorded entry point of the state and note its events' span."""
        start = len(self.state.log)
        events: list[dict[str, Any]] = fn(*args)
        self.think_ms.append(max(0, think_ms))
        self.spans.append((start, len(self.state.log) - start))
        return events

    def play_forced(self) -> list[dict[str, Any]]:
        """Rules section 6: decisions with one legal action are played by the engine."""
        events: list[dict[str, Any]] = []
        while not self.state.is_over and len(self.state.legal_actions()) == 1:
            events.extend(self.play(self.state.apply_forced))
        return events

    def decision(self) -> engine_pb2.Decision:
        """The pending decision as the acting seat may see it (observation only)."""
        st = self.state
        seat = st.acting_seat
        return engine_pb2.Decision(
            seat=seat,
            observation=wire.observation_to_proto(st.observation(seat)),
            legal_actions=wire.actions_to_proto(st.legal_actions()),
            default_action=wire.action_to_proto(st.default_action()),
            ply=self.ply,
        )

    def fill_next(self, msg: Any) -> None:
        """Set the `next` oneof of a response: the result if over, else the decision."""
        if self.state.is_over:
            msg.result.CopyFrom(wire.result_to_proto(self.state.result or {}))
        else:
            msg.decision.CopyFrom(self.decision())

    def replay(self) -> game_pb2.Replay:
        """The whole game for viewers; only call once the game is over."""
        st = self.state
        record = wire.record_to_proto(st.record)
        replay = game_pb2.Replay(
            format=REPLAY_FORMAT,
            ruleset=record.ruleset,
            engine_version=record.engine_version,
            config=record.config,
            seats=self.seats,
            cave=record.cave,
            sleeved=record.sleeved,
            first_lead=record.first_lead,
            events=wire.events_to_proto(st.log),
            result=wire.result_to_proto(st.result or {}),
            record_format=record.format,
        )
        for entry, think, (first, count) in zip(
            record.entries, self.think_ms, self.spans, strict=True
        ):
            dec = replay.decisions.add(
                seat=entry.seat,
                forced=entry.forced,
                think_time_ms=think,
                first_event=first,
                num_events=count,
            )
            which = entry.WhichOneof("entry")
            if which == "action":
                dec.action.CopyFrom(entry.action)
            elif which is not None:
                setattr(dec, which, getattr(entry, which))
        return replay


class GameStore:
    """All live games of one engine process, with idle expiry and a size limit."""

    def __init__(self, idle_timeout_s: float = 600.0, max_games: int = 10_000) -> None:
        self.idle_timeout_s = idle_timeout_s
        self.max_games = max_games
        self._games: dict[str, Game] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._games)

    def create(
        self, config: game_pb2.GameConfig, seats: list[game_pb2.SeatInfo]
    ) -> tuple[Game, list[dict[str, Any]]]:
        """Start a game; returns it and the events up to its first real decision."""
        cfg = wire.config_from_proto(config)
        try:
            state = new_game(GameConfig.from_dict(cfg))
        except (ValueError, TypeError) as exc:
            raise invalid(f"bad game config: {exc}") from None
        if seats and len(seats) != cfg["num_seats"]:
            raise invalid(f"{len(seats)} seat labels given for {cfg['num_seats']} seats")
        game = Game(game_id=str(uuid.uuid4()), state=state, seats=list(seats))
        events = list(state.log)
        events.extend(game.play_forced())  # before anyone else can see the game
        with self._lock:
            if len(self._games) >= self.max_games:
                raise ServiceError(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"too many live games ({self.max_games}); close finished games",
                )
            self._games[game.game_id] = game
        log.info(
            "game %s started: seats=%d difficulty=%s",
            game.game_id,
            cfg["num_seats"],
            cfg["difficulty"],
        )
        return game, events

    def get(self, game_id: str) -> Game:
        """The live game, refreshed as used; NOT_FOUND for unknown or expired ids."""
        with self._lock:
            game = self._games.get(game_id)
        if game is None:
            raise ServiceError(
                grpc.StatusCode.NOT_FOUND, f"no live game {game_id!r} (unknown, closed or expired)"
            )
        game.last_used = time.monotonic()
        return game

    def close(self, game_id: str) -> bool:
        with self._lock:
            return self._games.pop(game_id, None) is not None

    def expire(self, now: float | None = None) -> list[str]:
        """Forget games idle for longer than the idle timeout; returns their ids."""
        now = time.monotonic() if now is None else now
        with self._lock:
            old = [gid for gid, g in self._games.items() if now - g.last_used > self.idle_timeout_s]
            for gid in old:
                del self._games[gid]
        for gid in old:
            log.info("game %s expired after %.0f s idle", gid, self.idle_timeout_s)
        return old


def step(game: Game, request: engine_pb2.StepRequest) -> engine_pb2.StepResponse:
    """Apply one answer to a game (caller holds `game.lock`)."""
    raw = request.SerializeToString(deterministic=True)
    if request.HasField("ply") and raw == game.last_request and game.last_response is not None:
        return game.last_response  # a retried Step: same answer, nothing applied twice
    if game.broken:
        raise ServiceError(grpc.StatusCode.INTERNAL, f"game is unusable: {game.broken}")
    st = game.state
    if st.is_over:
        raise precondition("the game is over; ask GetRecord / GetReplay")
    if request.HasField("ply") and request.ply != game.ply:
        raise precondition(f"stale request: ply {request.ply}, but the game is at ply {game.ply}")
    which = request.WhichOneof("answer")
    n = len(st.seats)
    if which is None:
        raise invalid("StepRequest needs one of action, fault or forfeit")
    if not 0 <= request.seat < n:
        raise invalid(f"seat {request.seat} does not exist (seats 0..{n - 1})")
    if which in ("action", "fault") and request.seat != st.acting_seat:
        raise precondition(f"seat {request.seat} is not to act; seat {st.acting_seat} is")
    if which == "action":
        try:
            action = Action.from_dict(wire.action_from_proto(request.action))
        except (wire.WireError, IllegalAction) as exc:
            raise invalid(f"malformed action: {exc}") from None
        try:
            events = game.play(st.apply, action, think_ms=request.think_time_ms)
        except IllegalAction as exc:
            raise invalid(f"illegal action: {exc}") from None
    elif which == "fault":
        events = game.play(
            st.apply_default, request.fault or "fault", think_ms=request.think_time_ms
        )
    else:
        try:
            events = game.play(st.forfeit, request.seat, request.forfeit or "forfeit")
        except IllegalAction as exc:
            raise precondition(str(exc)) from None
    events.extend(game.play_forced())
    response = engine_pb2.StepResponse(events=wire.events_to_proto(events))
    game.fill_next(response)
    game.last_request, game.last_response = raw, response
    if st.is_over:
        result = st.result or {}
        log.info(
            "game %s over: %s, winner %s, ranks %s after %d plies",
            game.game_id,
            result.get("reason"),
            result.get("winner"),
            result.get("ranks"),
            game.ply,
        )
    return response
