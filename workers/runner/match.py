"""Play one match: bots (gRPC `Bot`) against each other through the engine (gRPC `Engine`).

The loop is deliberately simple and single-threaded: ask the acting seat's
bot, send its answer to the engine, repeat. How a bot is reached is its seat's
transport (`workers.runner.transport`: a dialled bot by unary Act or over one
ActStream, as its handshake negotiates; a connected bot through its relay), and
the engine is one `Play` stream per game or unary calls
(`workers.runner.engine_stream`); the loop is the same for all of them.
Everything the rules (§6) say about time and misbehaviour is decided here, on
this process's monotonic clock around the Act call only (the platform's own
work and jitter are not the bot's), and handed to the engine as a `fault` or
`forfeit` answer so the engine plays the default and keeps count:

- time: each decision has `decision_s`; overrun is paid from the seat's
  bank; the Act deadline is `decision_s + bank left`. Deadline and bank
  exceeded -> fault "timeout".
- an error status, a malformed reply, a reply too large for the channel, an
  action that is not in the legal list -> fault with that kind.
- UNAVAILABLE followed by connection refused (nothing listens any more), or a
  hosted bot's process that exited -> forfeit "dead bot" (rules: "a bot process
  that died forfeits the seat").
- unreachable at the start (handshake fails and nothing listens) -> forfeit
  before the first decision.

Engine trouble is never a bot's fault. The runner keeps every answer the
engine applied; when the engine dies (UNAVAILABLE/deadline/lost game after the
call's own retries) it creates the game again on an engine of the pool - the
same address once it is back, or another replica - re-applies those answers
(the engine is deterministic: the events must come out the same, or the
resume is refused) and carries on. The bots never notice: they keep seeing
the first game id. Only when no engine takes the game back within
`engine_resume_s` does the run fail with `EngineUnavailable` (retryable), and
no replay is written.

A match also has a wall-clock limit (`match_s`, checked before every
decision: `MatchOverrun`) and can be stopped from outside through `cancel`
(`MatchAborted`), e.g. when the worker lost its lease on the match.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc

from digdown import PROTOCOL_VERSION, text, wire
from digdown.v1 import bot_pb2, engine_pb2, engine_pb2_grpc, game_pb2
from workers.runner import replay as replay_io
from workers.runner.blame import (
    TRANSPORT_HANDSHAKES,
    LinkWatch,
    Referee,
    WorkerCutOff,
)
from workers.runner.clock import DecisionClock
from workers.runner.engine_stream import StreamedEngine
from workers.runner.engines import EnginePool
from workers.runner.net import (
    EngineError,
    EngineUnavailable,
    MatchAborted,
    MatchOverrun,
    NoSeatPlayed,
    Undecodable,
    engine_channel_options,
    rpc_code,
    rpc_details,
)
from workers.runner.passthrough import (
    RawDecision,
    RawDecisionRequest,
    decision_message,
    observation_message,
)
from workers.runner.terms import (
    TRANSPORT_FAULTS,
    BotSpec,
    Fault,
    FaultKind,
    MatchOutcome,
    SeatTransport,
    TimeControl,
    address_forms,
)
from workers.runner.transport import CLOSE_GRACE_S, DialledTransport

log = logging.getLogger("workers.runner")

# The terms live in workers.runner.terms; named here too for the callers that import them
# from the match module.
__all__ = [
    "BotSpec",
    "Fault",
    "FaultKind",
    "MatchOutcome",
    "MatchRun",
    "TimeControl",
    "address_forms",
    "run_match",
    "verify_replay",
]

RUNNER_VERSION = replay_io.RUNNER_VERSION
# Engine answers that mean "the engine (or this game on it) is gone": retry the match.
_ENGINE_GONE = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.UNKNOWN,
}


@dataclass
class SeatState:
    """The runner's bookkeeping for one seat during a match."""

    seat: int
    spec: BotSpec
    transport: SeatTransport | None = None
    name: str = ""
    version: str = ""
    protocol_version: int = 0
    handshake: str = ""  # "ok", "unimplemented", or what went wrong
    bank_s: float = 0.0
    decisions: int = 0
    think_ms_total: int = 0
    think_ms_max: int = 0
    think_s: float = 0.0  # exact total (think_ms_total is a sum of truncated ms)
    cpu_s: float | None = None  # CPU time of its decisions, when measured
    faults: int = 0
    out: bool = False  # forfeited (by the runner or the engine's third fault)
    seen_events: int = 0
    cut_seen: bool = False  # its last decision's wait saw this worker cut off (LinkWatch)


@dataclass
class _Answer:
    kind: str  # "action", "fault", "forfeit"
    action: game_pb2.Action | None = None
    reason: str = ""
    think_ms: int = 0
    fault_kind: FaultKind | None = None


def _action_key(msg: game_pb2.Action) -> tuple[Any, ...]:
    """A hashable identity of an action, independent of unknown fields and field order."""
    d = wire.action_from_proto(msg)
    return tuple(sorted(d.items()))


# Handshakes run on threads kept for the process (a pool per match cost a thread start
# per seat and match); roomy enough that matches run side by side in threads never wait
# for each other's slow bots. A forked child makes its own (threads do not survive fork).
_HANDSHAKE_THREADS = 64
_handshakes: ThreadPoolExecutor | None = None
_handshakes_lock = threading.Lock()


def _handshake_pool() -> ThreadPoolExecutor:
    global _handshakes
    with _handshakes_lock:
        if _handshakes is None:
            _handshakes = ThreadPoolExecutor(_HANDSHAKE_THREADS, thread_name_prefix="handshake")
        return _handshakes


def _forget_handshake_pool() -> None:
    global _handshakes, _handshakes_lock
    _handshakes, _handshakes_lock = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_handshake_pool)


@dataclass
class MatchRun:
    """One run of a match between `bots` on an engine of `engines` (see `run_match`)."""

    engines: EnginePool
    bots: Sequence[BotSpec]
    seed: int
    difficulty: str = "normal"
    ruleset: str = "dd-1"
    time_control: TimeControl = field(default_factory=TimeControl)
    on_progress: Callable[[int], None] | None = None
    # Told every decision before the bot is asked (for spectators: workers/live.py).
    on_decision: Callable[[engine_pb2.Decision, Sequence[game_pb2.Event]], None] | None = None
    match_id: str = ""
    # Asked before every decision; a non-empty answer stops the run (MatchAborted).
    cancel: Callable[[], str] | None = None
    # Decides whether a transport fault is the bot's or this worker's (blame.py).
    referee: Referee = field(default_factory=Referee)

    def __post_init__(self) -> None:
        if not 2 <= len(self.bots) <= 4:
            raise ValueError(f"a match needs 2 to 4 bots, got {len(self.bots)}")
        self.seats = [SeatState(seat=i, spec=b) for i, b in enumerate(self.bots)]
        self.faults: list[Fault] = []
        self.events: list[game_pb2.Event] = []
        self.game_id = ""  # the id the bots see: the first game's, kept across resumes
        self.engine_address = ""  # the engine holding the game now
        self.engines_used: list[str] = []
        self.resumes = 0
        self.engine_s = 0.0
        self.handshakes_s = 0.0
        self._closing: list[Any] | None = None  # transports' closes begun (_release_begin)
        self._closing_until = 0.0
        # The game on the engine holding it now: its id and its capability there
        # (a resumed game gets new ones). The token is never sent to bots.
        self._engine_game_id = ""
        self.control_token = ""
        self._engine: Any = None
        self._new_game: engine_pb2.NewGameRequest | None = None
        # Every answer the engine applied, in order: what a resume re-applies.
        self._applied: list[engine_pb2.StepRequest] = []
        # Per asked decision (by ply): wall and CPU milliseconds, beside the charged time.
        self.clocks: dict[int, dict[str, int]] = {}

    # --- engine calls ---------------------------------------------------------------

    def _engine_call(self, name: str, request: Any, *, idempotent: bool) -> Any:
        """Call the engine with a deadline; retry idempotent calls; classify failures."""
        tc = self.time_control
        method = getattr(self._engine, name)
        attempts = 1 + (tc.engine_retries if idempotent else 0)
        started = time.monotonic()
        try:
            for attempt in range(attempts):
                try:
                    return method(request, timeout=tc.engine_timeout_s)
                except grpc.RpcError as exc:
                    code = rpc_code(exc)
                    detail = rpc_details(exc, 300)
                    if code not in _ENGINE_GONE:
                        raise EngineError(f"engine {name}: {code.name}: {detail}") from None
                    if code == grpc.StatusCode.NOT_FOUND or attempt == attempts - 1:
                        raise EngineUnavailable(
                            f"engine {self.engine_address} {name}: {code.name}: {detail}"
                        ) from None
                    log.warning("engine %s: %s (%s), retrying", name, code.name, detail)
                    time.sleep(0.2 * (attempt + 1))
            raise AssertionError("unreachable")
        finally:
            self.engine_s += time.monotonic() - started

    def _game_call(self, name: str, request: Any) -> Any:
        """A call about the live game; if its engine is gone, resume the game and repeat it."""
        deadline = time.monotonic() + self.time_control.engine_resume_s
        while True:
            request.game_id, request.control_token = self._engine_game_id, self.control_token
            try:
                return self._engine_call(name, request, idempotent=True)
            except EngineUnavailable as exc:
                self.engines.mark_down(self.engine_address, str(exc))
                if time.monotonic() > deadline:
                    raise
                log.warning("match %s: %s; resuming the game", self.match_id, exc)
                self._create_game(deadline, resume=True)

    def _create_game(self, deadline: float, *, resume: bool) -> engine_pb2.NewGameResponse:
        """Create the game on an engine of the pool and re-apply every applied answer.

        Tries each engine address in turn (the pool rotates them), again and
        again with a growing pause, until one takes the game or `deadline`
        passes (EngineUnavailable). A first creation makes one pass only.
        The re-created game must produce exactly the events already seen,
        else EngineError: a resume that diverged would record a game nobody
        played.
        """
        assert self._new_game is not None
        pause = 0.1
        failures: list[str] = []
        while True:
            for address in self.engines.addresses():
                self.engine_address = address
                channel = self.engines.channel(address)
                self._engine = (
                    StreamedEngine(channel)
                    if self.time_control.streams
                    else engine_pb2_grpc.EngineStub(channel)
                )
                try:
                    created: engine_pb2.NewGameResponse = self._engine_call(
                        "NewGame", self._new_game, idempotent=True
                    )
                    self._engine_game_id = created.game_id
                    self.control_token = created.control_token
                    self._reapply(created)
                except EngineUnavailable as exc:
                    failures.append(str(exc))
                    self.engines.mark_down(address, str(exc))
                    continue
                self.engines.mark_up(address)
                self.engines_used.append(address)
                if resume:
                    self.resumes += 1
                    log.warning(
                        "match %s: game resumed on %s as %s (%d answers re-applied)",
                        self.match_id, address, created.game_id, len(self._applied),
                    )  # fmt: skip
                return created
            if not resume or time.monotonic() + pause > deadline:
                raise EngineUnavailable(f"no engine took the game ({self.engines}): {failures[-1]}")
            time.sleep(pause)
            pause = min(2.0, pause * 2)

    def _reapply(self, created: engine_pb2.NewGameResponse) -> None:
        """Bring a freshly created game to where the lost one was (events must match)."""
        seen = len(created.events)
        for applied in self._applied:
            request = engine_pb2.StepRequest()
            request.CopyFrom(applied)
            request.game_id, request.control_token = created.game_id, created.control_token
            response = self._engine_call("Step", request, idempotent=True)
            seen += len(response.events)
        if self._applied and seen != len(self.events):
            raise EngineError(
                f"resumed game diverged: {seen} events after {len(self._applied)} answers, "
                f"{len(self.events)} before (the engine is not deterministic?)"
            )

    # --- bots -------------------------------------------------------------------------

    def _open_bots(self) -> None:
        tc = self.time_control
        for st in self.seats:
            st.bank_s = tc.bank_s
            st.name, st.version = st.spec.name, st.spec.version
            if st.spec.start_error:
                continue
            factory = st.spec.transport
            st.transport = (
                factory(tc)
                if factory is not None
                else DialledTransport(st.spec.address, tc, is_alive=st.spec.is_alive)
            )

    def _handshakes_begin(self) -> list[tuple[SeatState, Callable[[], Any]]]:
        """Start every bot's handshake at once; what ``_handshakes_finish`` waits for.

        A dialled bot's handshake is sent from this thread and answered side by side
        with the others' (``DialledTransport.handshake_begin``: no thread per seat);
        another transport's runs on the handshake threads when there are several, so
        a bot still starting never delays the others'."""
        tc = self.time_control
        # The highest version offered: 2 (one stream per seat) unless streams are off.
        offered = PROTOCOL_VERSION if tc.streams else 1
        request = bot_pb2.HandshakeRequest(protocol_version=offered)
        asked = [st for st in self.seats if not st.spec.start_error]

        def shake(st: SeatState) -> bot_pb2.HandshakeReply | Undecodable | grpc.RpcError:
            assert st.transport is not None
            try:
                return st.transport.handshake(request, tc.handshake_s)
            except grpc.RpcError as exc:
                return exc

        pending: list[tuple[SeatState, Callable[[], Any]]] = []
        try:
            for st in asked:
                begin = getattr(st.transport, "handshake_begin", None)
                if begin is not None:
                    reply = begin(request, tc.handshake_s)

                    def wait(reply: Callable[[], Any] = reply) -> Any:
                        try:
                            return reply()
                        except grpc.RpcError as exc:
                            return exc

                    pending.append((st, wait))
                elif len(asked) > 1:
                    pending.append((st, _handshake_pool().submit(shake, st).result))
                else:
                    pending.append((st, functools.partial(shake, st)))
        except BaseException:  # a call that could not start: take back those that did
            for _, started in pending:
                started()
            raise
        return pending

    def _handshakes_finish(
        self, pending: list[tuple[SeatState, Callable[[], Any]]]
    ) -> list[tuple[int, str]]:
        """Wait for the handshakes begun; returns (seat, reason) of unreachable ones."""
        offered = PROTOCOL_VERSION if self.time_control.streams else 1
        dead: list[tuple[int, str]] = []
        for st in self.seats:
            if st.spec.start_error:
                st.handshake = st.spec.public(st.spec.start_error)
                dead.append((st.seat, st.spec.start_error))
        asked = [st for st, _ in pending]
        replies = [wait() for _, wait in pending]
        for st, reply in zip(asked, replies, strict=True):
            if isinstance(reply, grpc.RpcError):
                exc = reply
                code = rpc_code(exc)
                if code == grpc.StatusCode.UNIMPLEMENTED:
                    st.handshake, st.protocol_version = "unimplemented", 1
                    continue
                st.handshake = st.spec.public(f"{code.name}: {rpc_details(exc)}")
                if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    if st.spec.is_alive is not None and not st.spec.is_alive():
                        dead.append((st.seat, "bot process exited before the game"))
                    elif self._gone(st):
                        dead.append((st.seat, f"unreachable: nothing listens at {st.spec.address}"))
                # The log (operators only) keeps the address the replay leaves out.
                log.warning(
                    "seat %d (%s) handshake failed: %s: %s",
                    st.seat, st.spec.address, code.name, rpc_details(exc),
                )  # fmt: skip
                continue
            if isinstance(reply, Undecodable):
                st.handshake = f"malformed: undecodable reply ({reply.description})"
                st.protocol_version = 1
                continue
            st.handshake = "ok"
            st.protocol_version = reply.protocol_version or 1
            # The bot's own words: into the replay, the CLI and other bots' view.
            st.name = st.name or text.clean(reply.name, text.NAME_MAX)
            st.version = st.version or text.clean(reply.version, text.NAME_MAX)
            if not 1 <= st.protocol_version <= offered:
                dead.append(
                    (st.seat, f"protocol version {reply.protocol_version} is not supported")
                )
        return dead

    @staticmethod
    def _dialled(st: SeatState) -> str:
        """The address this worker dials for the seat ("" for a seat with a transport of
        its own, e.g. a connected bot: the referee does not judge those)."""
        return st.spec.address if st.spec.transport is None else ""

    @staticmethod
    def _witness(st: SeatState) -> str:
        """The address that proves this worker's network works when it answers a
        connection: a dialled seat's own, or what a seat with a transport of its own
        names (a connected bot's relay: a ladder server, a known-good peer)."""
        named = getattr(st.transport, "witness", None)
        return MatchRun._dialled(st) or (named() if named is not None else "")

    def _others(self, st: SeatState) -> list[str]:
        """The witnesses of ``st``'s faults: every other seat's address (above)."""
        return [self._witness(o) for o in self.seats if o is not st]

    def _gone(self, st: SeatState) -> bool:
        """The seat's transport has proof that the bot is gone (nothing listens, ...)."""
        return st.transport is not None and st.transport.gone()

    def _ask(self, st: SeatState, decision: engine_pb2.Decision) -> _Answer:
        """Ask one bot for one decision; every failure becomes a fault or a forfeit."""
        tc = self.time_control
        if st.spec.is_alive is not None and not st.spec.is_alive():
            return _Answer("forfeit", reason="dead: bot process exited", fault_kind=FaultKind.DEAD)
        new_events = self.events[st.seen_events :][-tc.max_events_per_request :]
        st.seen_events = len(self.events)
        # A streamed engine's decision carries the observation as the engine's bytes
        # (workers.runner.passthrough): sent on as they are to a dialled bot, whose
        # stub serializes any message; other transports get the real message.
        make: Any = bot_pb2.DecisionRequest
        observation: Any = decision.observation
        if isinstance(decision, RawDecision):
            if isinstance(st.transport, DialledTransport):
                make = RawDecisionRequest
            else:
                observation = observation_message(observation)
        # Read once: each read of a message's field builds its value again (upb).
        legal_actions, ply = decision.legal_actions, decision.ply
        request = make(
            game_id=self.game_id,
            seat=st.seat,
            observation=observation,
            legal_actions=legal_actions,
            time_left_ms=int(st.bank_s * 1000),
            deadline_ms=int(tc.decision_s * 1000),
            events=new_events,
            ply=ply,
        )
        timeout = tc.decision_s + st.bank_s
        clock = DecisionClock(st.spec.cpu_usage, tc)
        error: grpc.RpcError | None = None
        reply: bot_pb2.DecisionReply | Undecodable | None = None
        assert st.transport is not None
        # A remote seat's link is watched while its answer is late (evidence from then).
        address = self._dialled(st)
        watch = (
            LinkWatch(self.referee, address, self._others(st), tc.decision_s)
            if address and not address.startswith("unix:")
            else None
        )
        try:
            reply = st.transport.act(request, clock.wall_timeout(timeout))
        except grpc.RpcError as exc:
            error = exc
        finally:
            if watch is not None:
                watch.stop()
                st.cut_seen = watch.cut_seen
        elapsed = clock.stop()  # what the time control charges: wall or CPU time
        # A transport that waited on the ladder's own trouble (a connected seat whose
        # stream's server restarted) says how long: never the bot's time.
        take_uncharged = getattr(st.transport, "take_uncharged_s", None)
        if take_uncharged is not None:
            uncharged = take_uncharged()
            if uncharged > 0:
                elapsed = max(0.0, elapsed - uncharged)
                clock.wall_s = max(0.0, clock.wall_s - uncharged)
        self.clocks[ply] = clock.recorded()
        if clock.cpu_s is not None:
            st.cpu_s = (st.cpu_s or 0.0) + clock.cpu_s
        think_ms = int(elapsed * 1000)
        st.decisions += 1
        st.think_ms_total += think_ms
        st.think_s += elapsed
        st.think_ms_max = max(st.think_ms_max, think_ms)
        overrun = elapsed - tc.decision_s
        if overrun > 0:
            st.bank_s = max(0.0, st.bank_s - overrun)
            if overrun > timeout - tc.decision_s and error is None:
                error_kind = FaultKind.TIMEOUT
                return _Answer(
                    "fault",
                    reason=f"timeout: answered after {elapsed:.3f} s, deadline and bank exceeded",
                    think_ms=think_ms,
                    fault_kind=error_kind,
                )
        if error is not None:
            return self._classify(st, error, clock.wall_s, think_ms)
        assert reply is not None
        if isinstance(reply, Undecodable):
            return _Answer(
                "fault",
                reason=f"malformed: undecodable reply ({reply.description})",
                think_ms=think_ms,
                fault_kind=FaultKind.MALFORMED,
            )
        if not reply.HasField("action") or reply.action.WhichOneof("kind") is None:
            return _Answer(
                "fault",
                reason="malformed: reply without an action",
                think_ms=think_ms,
                fault_kind=FaultKind.MALFORMED,
            )
        # Most replies are an exact copy of a legal action: compared as messages (in C),
        # else by what they mean (field order, unknown fields and defaults aside).
        action = reply.action
        for legal in legal_actions:
            if legal == action:
                return _Answer("action", action=legal, think_ms=think_ms)
        try:
            key = _action_key(reply.action)
        except wire.WireError as exc:
            return _Answer(
                "fault",
                reason=f"malformed: {exc}",
                think_ms=think_ms,
                fault_kind=FaultKind.MALFORMED,
            )
        for legal in decision.legal_actions:
            if _action_key(legal) == key:
                return _Answer("action", action=legal, think_ms=think_ms)
        shown = str(dict(key))[:120]
        return _Answer(
            "fault",
            reason=f"illegal: {shown} is not a legal action",
            think_ms=think_ms,
            fault_kind=FaultKind.ILLEGAL,
        )

    def _classify(
        self, st: SeatState, exc: grpc.RpcError, elapsed: float, think_ms: int
    ) -> _Answer:
        code = rpc_code(exc)
        detail = rpc_details(exc)
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            st.bank_s = 0.0
            return _Answer(
                "fault",
                reason=f"timeout: no answer within {elapsed:.3f} s (deadline and bank exceeded)",
                think_ms=think_ms,
                fault_kind=FaultKind.TIMEOUT,
            )
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
            kind = FaultKind.TOO_LARGE if "larger than max" in detail else FaultKind.ERROR
            return _Answer("fault", reason=f"{kind}: {detail}", think_ms=think_ms, fault_kind=kind)
        if code == grpc.StatusCode.UNAVAILABLE:
            if st.spec.is_alive is not None and not st.spec.is_alive():
                return _Answer(
                    "forfeit",
                    reason="dead: bot process exited",
                    think_ms=think_ms,
                    fault_kind=FaultKind.DEAD,
                )
            if self._gone(st):
                return _Answer(
                    "forfeit",
                    reason=f"dead: connection lost ({detail}) and nothing listens any more",
                    think_ms=think_ms,
                    fault_kind=FaultKind.DEAD,
                )
            return _Answer(
                "fault",
                reason=f"unavailable: {detail}",
                think_ms=think_ms,
                fault_kind=FaultKind.UNAVAILABLE,
            )
        return _Answer(
            "fault",
            reason=f"error: {code.name}: {detail}",
            think_ms=think_ms,
            fault_kind=FaultKind.ERROR,
        )

    # --- the loop -----------------------------------------------------------------------

    def _note_events(self, events: Sequence[game_pb2.Event]) -> None:
        self.events.extend(events)
        for e in events:
            if e.kind == "FORFEIT" and e.HasField("seat") and 0 <= e.seat < len(self.seats):
                self.seats[e.seat].out = True

    def _step(self, seat: int, ply: int, answer: _Answer) -> engine_pb2.StepResponse:
        # Often a bot's words: stored, sent, printed; never with a private address.
        if answer.reason:
            answer.reason = text.clean(self.seats[seat].spec.public(answer.reason))
        # game_id and control_token: the engine's game of the moment (_game_call).
        request = engine_pb2.StepRequest(seat=seat, ply=ply, think_time_ms=answer.think_ms)
        if answer.kind == "action":
            assert answer.action is not None
            request.action.CopyFrom(answer.action)
        elif answer.kind == "fault":
            request.fault = answer.reason
        else:
            request.forfeit = answer.reason
        if answer.kind != "action":
            st = self.seats[seat]
            fault = Fault(
                seat,
                ply,
                answer.fault_kind or FaultKind.ERROR,
                answer.reason,
                answer.think_ms,
                forfeit=answer.kind == "forfeit",
            )
            self.faults.append(fault)
            if answer.kind == "fault":
                st.faults += 1
            log.info("seat %d ply %d %s: %s", seat, ply, answer.kind, answer.reason)
        response: engine_pb2.StepResponse = self._game_call("Step", request)
        self._applied.append(request)
        self._note_events(response.events)
        return response

    def _check_limits(self, started: float) -> None:
        """Stop between decisions when the match ran too long or was cancelled."""
        limit = self.time_control.match_s
        if limit and time.monotonic() - started > limit:
            raise MatchOverrun(f"match ran past its wall-clock limit of {limit:g} s")
        reason = self.cancel() if self.cancel is not None else ""
        if reason:
            raise MatchAborted(reason)

    def run(self) -> MatchOutcome:
        """Run the match to the end and return its outcome (no file written here)."""
        tc = self.time_control
        started = time.monotonic()
        started_at = datetime.now(UTC).isoformat(timespec="seconds")
        try:
            self._open_bots()
            mark = time.monotonic()
            pending = self._handshakes_begin()
            self.handshakes_s = time.monotonic() - mark
            # The game is created while the bots answer when its seats' names are known
            # already (the ladder's are): the request is the same either way.
            created = None
            answered = False
            try:
                if self._names_known():
                    created = self._create_first_game()
                mark = time.monotonic()
                answered = True
                dead = self._handshakes_finish(pending)
                self.handshakes_s += time.monotonic() - mark
            finally:
                if not answered:  # the game could not be created: take the calls back
                    for _, wait in pending:
                        wait()
            for st in self.seats:  # before the game: a failed dial may be this worker's
                if st.handshake.startswith(TRANSPORT_HANDSHAKES):
                    self.referee.charge(self._dialled(st), self._others(st), "a failed handshake")
            if len({seat for seat, _ in dead}) == len(self.seats):
                raise NoSeatPlayed(
                    "no seat could play: "
                    + "; ".join(
                        f"seat {seat}: {self.seats[seat].spec.public(reason)}"
                        for seat, reason in dead
                    )
                )
            if created is None:
                created = self._create_first_game()
            self.game_id = created.game_id
            log.info("match %s: game %s on %s", self.match_id, self.game_id, self.engine_address)
            self._note_events(created.events)
            next_: Any = created
            ply = 0
            for seat, reason in dead:
                if next_.WhichOneof("next") != "decision":
                    break
                ply = next_.decision.ply
                next_ = self._step(
                    seat, ply, _Answer("forfeit", reason=reason, fault_kind=FaultKind.UNREACHABLE)
                )
            while next_.WhichOneof("next") == "decision":
                self._check_limits(started)
                decision: engine_pb2.Decision = next_.decision
                if self.on_decision is not None:
                    self.on_decision(
                        decision_message(decision)
                        if isinstance(decision, RawDecision)
                        else decision,
                        self.events,
                    )
                seat, at = decision.seat, decision.ply
                st = self.seats[seat]
                answer = self._ask(st, decision)
                if answer.fault_kind in TRANSPORT_FAULTS and st.cut_seen:
                    raise WorkerCutOff(
                        f"worker cut off from the bots while seat {seat} was awaited "
                        f"({answer.reason}; neither the seat nor a witness answered then): "
                        "nobody is charged"
                    )
                if answer.fault_kind in TRANSPORT_FAULTS:
                    self.referee.charge(self._dialled(st), self._others(st), answer.reason)
                next_ = self._step(seat, at, answer)
                ply = at + 1
                if self.on_progress is not None:
                    self.on_progress(ply)
            # The game is over: the bots end their streams while the engine builds the
            # replay (a streamed engine's GetReplay half-closes its stream too).
            closing = self._release_begin()
            replay_msg: engine_pb2.GetReplayResponse = self._game_call(
                "GetReplay", engine_pb2.GetReplayRequest()
            )
            duration = time.monotonic() - started
            seats = [self._seat_summary(st) for st in self.seats]
            doc = replay_io.build(
                replay_msg.replay,
                time_control={
                    "decision_ms": int(tc.decision_s * 1000),
                    "bank_ms": int(tc.bank_s * 1000),
                    "max_reply_bytes": tc.max_reply_bytes,
                    "hosted_clock": tc.hosted_clock,
                    "cpu_wall_factor": tc.cpu_wall_factor,
                },
                faults=[asdict(f) for f in self.faults],
                seats=seats,
                match={
                    "match_id": self.match_id,
                    "game_id": self.game_id,
                    "engine": self.engine_address,
                    "engines": self.engines_used,
                    "resumes": self.resumes,
                    "started_at": started_at,
                    "duration_s": round(duration, 3),
                },
                runner_version=RUNNER_VERSION,
            )
            for ply, measured in self.clocks.items():
                if 0 <= ply < len(doc["decisions"]):
                    doc["decisions"][ply].update(measured)
            self._release(closing)
            return MatchOutcome(
                game_id=self.game_id,
                result=doc["result"],
                replay=doc,
                faults=self.faults,
                seats=seats,
                decisions=sum(st.decisions for st in self.seats),
                duration_s=duration,
                engine_s=self.engine_s,
                bots_s=sum(st.think_s for st in self.seats) + self.handshakes_s,
                resumes=self.resumes,
            )
        finally:
            self._release()

    def _names_known(self) -> bool:
        """Whether every seat's name and version are set by its spec (the handshake's
        answer then changes nothing the game is created with)."""
        return all(st.spec.name and st.spec.version for st in self.seats)

    def _create_first_game(self) -> Any:
        config = game_pb2.GameConfig(
            ruleset=self.ruleset,
            seed=self.seed,
            num_seats=len(self.seats),
            difficulty=self.difficulty,
        )
        seats_info = [
            game_pb2.SeatInfo(seat=st.seat, bot=st.name, version=st.version) for st in self.seats
        ]
        self._new_game = engine_pb2.NewGameRequest(config=config, seats=seats_info)
        return self._create_game(time.monotonic(), resume=False)

    def _release_begin(self) -> list[Any]:
        """Start ending every seat's transport without waiting (``_release`` waits): the
        dialled seats' streams are half-closed, all at once, and other transports close
        on the handshake threads. Called when the game is over, so that the bots end
        their streams while the engine builds the replay."""
        if self._closing is not None:
            return self._closing
        transports = [st.transport for st in self.seats if st.transport is not None]
        others = [t for t in transports if not isinstance(t, DialledTransport)]
        closing = [_handshake_pool().submit(t.close) for t in others]
        for t in transports:
            if isinstance(t, DialledTransport):
                t.half_close()
        self._closing = closing
        self._closing_until = time.monotonic() + CLOSE_GRACE_S  # one grace for all of them
        return closing

    def _release(self, closing: list[Any] | None = None) -> None:
        """Close the engine's game and every seat's transport (idempotent). The streams
        end side by side: each waits a moment for its other side to end it, and one after
        the other those moments added up to a share of a short match. Dialled seats'
        streams and the engine's are half-closed first, all at once (``_release_begin``),
        and then waited for on this thread (by then most have ended); other transports
        close on the handshake threads meanwhile."""
        closing = self._release_begin() if closing is None else closing
        transports = [st.transport for st in self.seats if st.transport is not None]
        dialled = [t for t in transports if isinstance(t, DialledTransport)]
        until = max(self._closing_until, time.monotonic() + 0.05)
        try:
            if isinstance(self._engine, StreamedEngine) and self._engine_game_id:
                self._engine.half_close()
            self._close_game()
        finally:
            try:
                for t in dialled:
                    t.close(until=until)
            finally:
                for future in closing:
                    future.result()

    def _close_game(self) -> None:
        """Free the game on the engine (best effort: it expires anyway when idle)."""
        if not self._engine_game_id or self._engine is None:
            return
        game_id, self._engine_game_id = self._engine_game_id, ""
        request = engine_pb2.CloseGameRequest(game_id=game_id, control_token=self.control_token)
        try:
            self._engine.CloseGame(request, timeout=2.0)
        except grpc.RpcError as exc:
            log.info("CloseGame %s: %s", game_id, rpc_code(exc).name)

    def _seat_summary(self, st: SeatState) -> dict[str, Any]:
        return {
            "seat": st.seat,
            "bot": st.name,
            "version": st.version,
            "address": st.spec.address if st.spec.shown_address is None else st.spec.shown_address,
            "protocol_version": st.protocol_version,
            "handshake": st.handshake,
            "decisions": st.decisions,
            "think_ms_total": st.think_ms_total,
            "think_ms_max": st.think_ms_max,
            "think_s": round(st.think_s, 6),
            "cpu_s": None if st.cpu_s is None else round(st.cpu_s, 6),
            "clock": "cpu"
            if st.spec.cpu_usage and self.time_control.hosted_clock == "cpu"
            else "wall",
            "bank_left_ms": int(st.bank_s * 1000),
            "runner_faults": st.faults,
            "out": st.out,
        }


def run_match(
    engines: str | EnginePool,
    bots: Sequence[BotSpec | str],
    *,
    seed: int,
    difficulty: str = "normal",
    ruleset: str = "dd-1",
    time_control: TimeControl | None = None,
    out: str | Path | None = None,
    verify: bool = False,
    on_progress: Callable[[int], None] | None = None,
    match_id: str = "",
    cancel: Callable[[], str] | None = None,
    referee: Referee | None = None,
    on_decision: Callable[[engine_pb2.Decision, Sequence[game_pb2.Event]], None] | None = None,
) -> MatchOutcome:
    """Run one match; write its replay to `out` (atomically) only if it completed.

    `engines` is an address, a comma list or a DNS name of replicas (see
    `workers.runner.engines`), or a pool to reuse its channels. Raises
    `EngineUnavailable` (retryable) when no engine takes the game back,
    `EngineError` when the engine refuses what it should accept,
    `MatchOverrun` past `time_control.match_s`, `MatchAborted` when `cancel`
    says so. With `verify`, the replay is re-verified by the engine before it
    is written (EngineError if it does not verify: the file would be worthless).
    """
    specs = [b if isinstance(b, BotSpec) else BotSpec(address=b) for b in bots]
    pool = engines if isinstance(engines, EnginePool) else EnginePool(engines)
    run = MatchRun(
        engines=pool,
        bots=specs,
        seed=seed,
        difficulty=difficulty,
        ruleset=ruleset,
        time_control=time_control or TimeControl(),
        on_progress=on_progress,
        match_id=match_id,
        cancel=cancel,
        referee=referee or Referee(),
        on_decision=on_decision,
    )
    try:
        outcome = run.run()
    finally:
        if pool is not engines:
            pool.close()
    if verify:
        response = verify_replay(
            run.engine_address, outcome.replay, timeout_s=run.time_control.engine_timeout_s
        )
        outcome.verified = response.ok
        if not response.ok:
            raise EngineError(f"replay does not verify: {response.first_difference}")
    if out is not None:
        outcome.replay_path = Path(out)
        outcome.replay_bytes = replay_io.write(outcome.replay, outcome.replay_path)
    return outcome


def verify_replay(
    engine_address: str, doc: dict[str, Any], *, timeout_s: float = 30.0
) -> engine_pb2.VerifyReplayResponse:
    """Ask the engine to re-simulate a replay document (EngineUnavailable if it is gone)."""
    request = engine_pb2.VerifyReplayRequest(replay=replay_io.replay_to_proto(doc))
    channel = grpc.insecure_channel(engine_address, options=engine_channel_options())
    try:
        stub = engine_pb2_grpc.EngineStub(channel)
        return stub.VerifyReplay(request, timeout=timeout_s)
    except grpc.RpcError as exc:
        code = rpc_code(exc)
        if code in _ENGINE_GONE:
            raise EngineUnavailable(
                f"engine VerifyReplay: {code.name}: {rpc_details(exc)}"
            ) from None
        raise EngineError(f"engine VerifyReplay: {code.name}: {rpc_details(exc)}") from None
    finally:
        channel.close()
