"""Live game sessions of the engine service: one `State` per game id, guarded by a lock.

Kept apart from the gRPC plumbing (engine/server.py) so that the rules of
the service - forced plays, seat checks, retry-safe `ply`, idle expiry, what
may be shown before the end, who may act on a game - are plain Python with
plain errors.

Control of a session is a capability: `NewGame` hands its creator a random
`control_token`, and every call that names the game must carry it. Bots learn
a game's `game_id` (it is in every `DecisionRequest`), never its token, so a bot
that can reach the engine still cannot step, forfeit, inspect or close a game.
A wrong or missing token gets the very answer an unknown id gets (NOT_FOUND),
so the engine does not tell anyone which ids are live.

Text a session keeps (seat labels, fault and forfeit reasons) comes from bots
through the runner: it is cleaned and bounded here (`digdown.text`), so the
record, the replay and other bots' events never carry control characters or
megabytes.
"""

from __future__ import annotations

import hmac
import logging
import secrets
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, cast

import grpc

from digdown import serving, text, wire
from digdown.v1 import engine_pb2, game_pb2
from engine import metrics
from engine.rules import Action, GameConfig, IllegalAction, State, new_game
from engine.rules.shapes import Event, Result

log = logging.getLogger("engine.sessions")

REPLAY_FORMAT = wire.REPLAY_FORMAT
ID_MAX = 64  # a game_id is a UUID (36 characters); longer ones are refused unread
TOKEN_MAX = 128  # a control token is 43 characters
CONFIG_TEXT_MAX = 32  # ruleset and difficulty names
NOT_LIVE = "no live game with this game_id and control_token (unknown, closed or expired)"

ServiceError = serving.StatusError
"""An error to report to the caller as a gRPC status with a human message."""


def invalid(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, message)


def precondition(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.FAILED_PRECONDITION, message)


def not_live() -> ServiceError:
    return ServiceError(grpc.StatusCode.NOT_FOUND, NOT_LIVE)


def check_key(game_id: str, control_token: str) -> None:
    """Refuse ids and tokens that cannot be real before looking anything up (never echoed)."""
    if not game_id:
        raise invalid("game_id is empty")
    if len(game_id) > ID_MAX:
        raise invalid(f"game_id is longer than {ID_MAX} characters")
    if not control_token:
        raise invalid("control_token is empty: send the one NewGame returned with this game")
    if len(control_token) > TOKEN_MAX:
        raise invalid(f"control_token is longer than {TOKEN_MAX} characters")


def _result(state: State) -> Result:
    """The result of a game that is over (set when it ended)."""
    assert state.result is not None, "the game is not over"
    return state.result


def seat_labels(seats: list[game_pb2.SeatInfo]) -> list[game_pb2.SeatInfo]:
    """Seat labels as the replay keeps them: numbered in order, names cleaned and bounded."""
    return [
        game_pb2.SeatInfo(
            seat=i,
            bot=text.clean(s.bot, text.NAME_MAX),
            version=text.clean(s.version, text.NAME_MAX),
        )
        for i, s in enumerate(seats)
    ]


@dataclass
class Session:
    """One live game and the service's bookkeeping around the rules state."""

    game_id: str
    state: State
    seats: list[game_pb2.SeatInfo]
    # The capability of the creator (see the module docstring); never logged.
    control_token: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)
    # Who created it (the peer's address), for the per-client quota.
    client: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_used: float = field(default_factory=time.monotonic)
    # Per record entry: think time, and the span of `state.log` it produced.
    think_ms: list[int] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    # The last Step request (its deterministic bytes) and its answer, for retry-safe Steps.
    last_request: bytes | None = None
    last_response: engine_pb2.StepResponse | None = None
    # Set when the rules library raised something unexpected: the game is unusable.
    broken: str = ""

    @property
    def ply(self) -> int:
        return len(self.state.record["entries"])

    def play(self, fn: Any, *args: Any, think_ms: int = 0) -> list[Event]:
        """Run one recorded entry point of the state and note its events' span."""
        start = len(self.state.log)
        events: list[Event] = fn(*args)
        self.think_ms.append(max(0, think_ms))
        self.spans.append((start, len(self.state.log) - start))
        return events

    def play_forced(self) -> list[Event]:
        """Rules section 6: decisions with one legal action are played by the engine."""
        events: list[Event] = []
        while not self.state.is_over and len(self.state.legal_actions()) == 1:
            events.extend(self.play(self.state.apply_forced))
        return events

    def decision(self) -> engine_pb2.Decision:
        """The pending decision as the acting seat may see it (observation only)."""
        decision = engine_pb2.Decision()
        self.fill_decision(decision)
        return decision

    def fill_decision(self, into: engine_pb2.Decision) -> None:
        """Write the pending decision into an empty ``into`` (a response's own field):
        every part is built where it goes, not built apart and copied in whole again."""
        st = self.state
        seat = st.acting_seat
        into.seat = seat
        # Each part built in its field (wire's *_into): no message is copied again.
        wire.parse_into(st.observation(seat), into.observation)
        wire.actions_into(st.legal_actions(), into.legal_actions)
        wire.action_into(st.default_action(), into.default_action)
        into.ply = self.ply

    def fill_next(self, msg: Any) -> None:
        """Set the `next` oneof of a response: the result if over, else the decision."""
        if self.state.is_over:
            msg.result.CopyFrom(wire.result_to_proto(_result(self.state)))
        else:
            self.fill_decision(msg.decision)

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
            result=wire.result_to_proto(_result(st)),
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


class SessionStore:
    """All live sessions of one engine process: idle expiry, a size limit, a per-client quota.

    The quota keeps one client (one peer address) that creates games and never
    closes them from taking every slot: it runs into its own limit while the
    other clients' matches still start (docs/security.md says how to size it).
    """

    def __init__(
        self,
        idle_timeout_s: float = 600.0,
        max_games: int = 10_000,
        max_games_per_client: int | None = None,
    ) -> None:
        self.idle_timeout_s = idle_timeout_s
        self.max_games = max_games
        self.max_games_per_client = max_games_per_client or max_games
        self._sessions: dict[str, Session] = {}
        self._per_client: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._sessions)

    def create(
        self, config: game_pb2.GameConfig, seats: list[game_pb2.SeatInfo], client: str = ""
    ) -> tuple[Session, list[Event]]:
        """Start a game for `client`; returns it and the events up to its first real decision."""
        for name in ("ruleset", "difficulty"):
            if len(getattr(config, name)) > CONFIG_TEXT_MAX:
                raise invalid(
                    f"bad game config: {name} is longer than {CONFIG_TEXT_MAX} characters"
                )
        cfg = wire.config_from_proto(config)
        try:
            state = new_game(GameConfig.from_dict(cfg))
        except (ValueError, TypeError) as exc:
            raise invalid(f"bad game config: {exc}") from None
        if seats and len(seats) != cfg["num_seats"]:
            raise invalid(f"{len(seats)} seat labels given for {cfg['num_seats']} seats")
        session = Session(
            game_id=str(uuid.uuid4()), state=state, seats=seat_labels(list(seats)), client=client
        )
        events = list(state.log)
        events.extend(session.play_forced())  # before anyone else can see the game
        with self._lock:
            if len(self._sessions) >= self.max_games:
                raise ServiceError(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"too many live games ({self.max_games}); close finished games",
                )
            if self._per_client[client] >= self.max_games_per_client:
                log.warning(
                    "client %s is at its quota of %d live games", client, self.max_games_per_client
                )
                raise ServiceError(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"this client has {self.max_games_per_client} live games, its limit;"
                    " close finished games (CloseGame)",
                )
            self._sessions[session.game_id] = session
            self._per_client[client] += 1
        metrics.GAMES_CREATED.inc()
        log.info(
            "game %s started for %s: seats=%d difficulty=%s",
            session.game_id,
            client or "?",
            cfg["num_seats"],
            cfg["difficulty"],
        )
        return session, events

    def get(self, game_id: str, control_token: str) -> Session:
        """The live session, refreshed as used; NOT_FOUND for unknown ids and wrong tokens alike."""
        check_key(game_id, control_token)
        with self._lock:
            session = self._sessions.get(game_id)
        if session is None or not hmac.compare_digest(
            session.control_token.encode(), control_token.encode()
        ):
            raise not_live()
        session.last_used = time.monotonic()
        return session

    def close(self, game_id: str, control_token: str) -> bool:
        """Forget a session; False when there is none with this id and token."""
        check_key(game_id, control_token)
        with self._lock:
            session = self._sessions.get(game_id)
            if session is None or not hmac.compare_digest(
                session.control_token.encode(), control_token.encode()
            ):
                return False
            self._forget(game_id)
        return True

    def _forget(self, game_id: str) -> None:
        """Drop a session (caller holds `_lock`)."""
        session = self._sessions.pop(game_id)
        self._per_client[session.client] -= 1
        if self._per_client[session.client] <= 0:
            del self._per_client[session.client]

    def expire(self, now: float | None = None) -> list[str]:
        """Forget sessions idle for longer than the idle timeout; returns their ids."""
        now = time.monotonic() if now is None else now
        with self._lock:
            old = [
                gid for gid, s in self._sessions.items() if now - s.last_used > self.idle_timeout_s
            ]
            for gid in old:
                self._forget(gid)
        for gid in old:
            log.info("game %s expired after %.0f s idle", gid, self.idle_timeout_s)
        return old


def step(
    session: Session,
    request: engine_pb2.StepRequest,
    into: engine_pb2.StepResponse | None = None,
) -> engine_pb2.StepResponse:
    """Apply one answer to a game (caller holds `session.lock`), counted and timed.

    The answer is written into ``into`` when given (an empty field of a stream's
    response, which then needs no copy of the whole answer) and returned.
    """
    started = time.perf_counter()
    response = _apply(session, request, into)
    metrics.STEP_SECONDS.observe(time.perf_counter() - started)
    metrics.STEPS.inc()
    return response


def _apply(
    session: Session, request: engine_pb2.StepRequest, into: engine_pb2.StepResponse | None
) -> engine_pb2.StepResponse:
    """Apply one answer to a game.

    Fault and forfeit reasons are free text from the runner (often a bot's own
    words): they enter the record cleaned and cut to `text.REASON_MAX`.
    """
    # The request's own bytes (about a hundred), not a digest of them: hashing cost as
    # much as serializing, on every step.
    raw = request.SerializeToString(deterministic=True)
    if (
        request.HasField("ply")
        and raw == session.last_request
        and session.last_response is not None
    ):
        # A retried Step: same answer, nothing applied twice.
        if into is None:
            return session.last_response
        into.CopyFrom(session.last_response)
        return into
    if session.broken:
        raise ServiceError(grpc.StatusCode.INTERNAL, f"game is unusable: {session.broken}")
    st = session.state
    if st.is_over:
        raise precondition("the game is over; ask GetRecord / GetReplay")
    if request.HasField("ply") and request.ply != session.ply:
        raise precondition(
            f"stale request: ply {request.ply}, but the game is at ply {session.ply}"
        )
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
            action = Action.from_dict(cast(dict[str, Any], wire.action_from_proto(request.action)))
        except (wire.WireError, IllegalAction) as exc:
            raise invalid(f"malformed action: {exc}") from None
        try:
            events = session.play(st.apply, action, think_ms=request.think_time_ms)
        except IllegalAction as exc:
            raise invalid(f"illegal action: {exc}") from None
    elif which == "fault":
        reason = text.clean(request.fault) or "fault"
        events = session.play(st.apply_default, reason, think_ms=request.think_time_ms)
    else:
        reason = text.clean(request.forfeit) or "forfeit"
        try:
            events = session.play(st.forfeit, request.seat, reason)
        except IllegalAction as exc:
            raise precondition(str(exc)) from None
    events.extend(session.play_forced())
    response = engine_pb2.StepResponse() if into is None else into
    wire.events_into(events, response.events)  # built in place: not copied in
    session.fill_next(response)
    session.last_request, session.last_response = raw, response
    if st.is_over:
        result = st.result or {}
        log.info(
            "game %s over: %s, winner %s, ranks %s after %d plies",
            session.game_id,
            result.get("reason"),
            result.get("winner"),
            result.get("ranks"),
            session.ply,
        )
    return response
