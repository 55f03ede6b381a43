"""The author's bot in an arena game: an in-process `act` function, or a gRPC bot at an address.

Either way the bot sees exactly what it sees on the ladder: the observation and
the legal actions as the SDK's server hands them to `act` (the engine's dicts
are those: tests/engine/test_arena.py sends them through the protobuf messages
and back and compares), the same time control (a
deadline per decision, a bank per game that late answers spend) and the same
verdicts — a late, malformed or illegal answer or an exception is a fault
(the engine plays the rules §6 default; the third forfeits), a bot that is
gone forfeits its seat.

An in-process `act` cannot be interrupted: a late answer is measured, then
thrown away and played as a fault, exactly as the ladder would have done after
the deadline.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pickle
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import grpc

from digdown import PROTOCOL_VERSION, wire
from digdown.bot import Context, answer_to_proto
from digdown.v1 import bot_pb2, bot_pb2_grpc
from engine.rules import Action
from engine.rules.shapes import Event, Observation

HANDSHAKE_TIMEOUT_S = 10.0


class BotLoadError(ValueError):
    """The bot named on the command line cannot be loaded or reached; the message says why."""


@dataclass(frozen=True)
class Decided:
    """What the author's seat did with one decision."""

    kind: str  # "action", "fault" or "forfeit"
    think_s: float
    action: Action | None = None
    reason: str = ""
    fault_kind: str = ""  # the replay's fault kinds: timeout, illegal, error, dead, ...


@dataclass
class Clock:
    """One seat's time in one game (rules §6): a deadline per decision, a bank for overruns."""

    deadline_s: float
    bank_s: float

    def spend(self, think_s: float) -> bool:
        """Charge one answer; False when it came after the deadline and the bank were gone."""
        overrun = think_s - self.deadline_s
        if overrun <= 0:
            return True
        late = overrun > self.bank_s
        self.bank_s = max(0.0, self.bank_s - overrun)
        return not late


class AuthorSeat(Protocol):
    """The author's bot, asked one decision at a time."""

    label: str

    def decide(
        self,
        game_id: str,
        seat: int,
        ply: int,
        observation: Observation,
        legal: list[Action],
        events: list[Event],
        clock: Clock,
    ) -> Decided: ...

    def end_game(self, game_id: str, seat: int) -> None: ...


def _match(
    answer: Mapping[str, Any], legal: list[Action], legal_d: Sequence[Mapping[str, Any]]
) -> int:
    """Index of the legal action equal to the answer, or -1."""
    for i, d in enumerate(legal_d):
        if d == answer:
            return i
    return -1


def _illegal(answer: Mapping[str, Any], think_s: float) -> Decided:
    shown = str(answer)[:120]
    return Decided(
        "fault", think_s, reason=f"illegal: {shown} is not a legal action", fault_kind="illegal"
    )


def _late(think_s: float) -> Decided:
    return Decided(
        "fault",
        think_s,
        reason=f"timeout: answered after {think_s:.3f} s, deadline and bank exceeded",
        fault_kind="timeout",
    )


class LocalSeat:
    """An `act` function (or a per-game factory) called in this process, as the SDK would."""

    def __init__(self, label: str, act: Callable[..., Any] | None, factory: Any = None) -> None:
        self.label = label
        self._act = act
        self._factory = factory
        self._games: dict[tuple[str, int], Callable[..., Any]] = {}

    def _fn(self, game_id: str, seat: int) -> Callable[..., Any]:
        if self._act is not None:
            return self._act
        key = (game_id, seat)
        if key not in self._games:
            made = self._factory(game_id, seat)
            self._games[key] = getattr(made, "act", made)
        return self._games[key]

    def end_game(self, game_id: str, seat: int) -> None:
        self._games.pop((game_id, seat), None)

    def decide(
        self,
        game_id: str,
        seat: int,
        ply: int,
        observation: Observation,
        legal: list[Action],
        events: list[Event],
        clock: Clock,
    ) -> Decided:
        # The engine's dicts are the SDK's (a test sends them through the messages and back
        # and compares); but the engine shares unchanged parts between observations, read
        # only, where the SDK hands a bot fresh dicts it may change: so a fresh copy
        # (pickle is the fastest deep copy of plain data).
        obs_d = _fresh(observation)
        legal_d = [a.to_dict() for a in legal]
        fn = self._fn(game_id, seat)
        started = time.perf_counter()
        try:
            if _wants_context(fn):
                ctx = Context(
                    game_id=game_id,
                    seat=seat,
                    ply=ply,
                    deadline_ms=int(clock.deadline_s * 1000),
                    time_left_ms=int(clock.bank_s * 1000),
                    events=_fresh(list(events)),
                )
                answer = fn(obs_d, legal_d, context=ctx)
            else:
                answer = fn(obs_d, legal_d)
            chosen = wire.action_from_proto(answer_to_proto(answer, legal_d))  # type: ignore[arg-type]
        except Exception as exc:
            think_s = time.perf_counter() - started
            if not clock.spend(think_s):
                return _late(think_s)
            reason = f"bot error: {type(exc).__name__}: {exc}"[:500]
            return Decided("fault", think_s, reason=reason, fault_kind="error")
        think_s = time.perf_counter() - started
        if not clock.spend(think_s):
            return _late(think_s)
        i = _match(chosen, legal, legal_d)
        if i < 0:
            return _illegal(chosen, think_s)
        return Decided("action", think_s, action=legal[i])


def _fresh(data: Any) -> Any:
    """A deep copy of plain data (dicts, lists, numbers, strings)."""
    return pickle.loads(pickle.dumps(data, pickle.HIGHEST_PROTOCOL))


def _wants_context(fn: Callable[..., Any]) -> bool:
    try:
        return "context" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class RemoteSeat:
    """A `digdown.v1.Bot` gRPC server at an address (yours, or a hosted bundle's socket)."""

    def __init__(self, label: str, address: str) -> None:
        self.label = label
        self.address = address
        self._channel = grpc.insecure_channel(address)
        self._stub = bot_pb2_grpc.BotStub(self._channel)
        try:
            reply = self._stub.Handshake(
                bot_pb2.HandshakeRequest(protocol_version=PROTOCOL_VERSION),
                timeout=HANDSHAKE_TIMEOUT_S,
                wait_for_ready=True,
            )
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.UNIMPLEMENTED:
                raise BotLoadError(
                    f"no bot answers at {address}: {exc.code().name} {exc.details()}"
                ) from None
        else:
            self.label = reply.name or label

    def end_game(self, game_id: str, seat: int) -> None:
        pass

    def decide(
        self,
        game_id: str,
        seat: int,
        ply: int,
        observation: Observation,
        legal: list[Action],
        events: list[Event],
        clock: Clock,
    ) -> Decided:
        legal_msgs = wire.actions_to_proto(legal)
        request = bot_pb2.DecisionRequest(
            game_id=game_id,
            seat=seat,
            observation=wire.observation_to_proto(observation),
            legal_actions=legal_msgs,
            time_left_ms=int(clock.bank_s * 1000),
            deadline_ms=int(clock.deadline_s * 1000),
            events=wire.events_to_proto(events),
            ply=ply,
        )
        started = time.perf_counter()
        try:
            reply = self._stub.Act(request, timeout=clock.deadline_s + clock.bank_s)
        except grpc.RpcError as exc:
            think_s = time.perf_counter() - started
            code = exc.code()
            if code == grpc.StatusCode.DEADLINE_EXCEEDED:
                clock.spend(think_s)
                return _late(think_s)
            if not clock.spend(think_s):
                return _late(think_s)
            if code == grpc.StatusCode.UNAVAILABLE:
                reason = f"dead: connection lost ({exc.details()})"
                return Decided("forfeit", think_s, reason=reason, fault_kind="dead")
            reason = f"error: {code.name}: {exc.details()}"[:500]
            return Decided("fault", think_s, reason=reason, fault_kind="error")
        think_s = time.perf_counter() - started
        if not clock.spend(think_s):
            return _late(think_s)
        if not reply.HasField("action") or reply.action.WhichOneof("kind") is None:
            reason = "malformed: reply without an action"
            return Decided("fault", think_s, reason=reason, fault_kind="malformed")
        try:
            chosen = wire.action_from_proto(reply.action)
        except wire.WireError as exc:
            return Decided("fault", think_s, reason=f"malformed: {exc}", fault_kind="malformed")
        i = _match(chosen, legal, [wire.action_from_proto(m) for m in legal_msgs])
        if i < 0:
            return _illegal(chosen, think_s)
        return Decided("action", think_s, action=legal[i])


def _load_module(target: str) -> Any:
    """A bot file (`path/bot.py`) or an importable module (`mypkg.bot`)."""
    path = Path(target)
    if target.endswith(".py") or path.is_file():
        if not path.is_file():
            raise BotLoadError(f"no such bot file: {target}")
        # Its own folder first, so the bot's sibling modules import as they would on the ladder.
        sys.path.insert(0, str(path.resolve().parent))
        spec = importlib.util.spec_from_file_location(f"arena_bot_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise BotLoadError(f"cannot load {target} as Python")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(target)
    except ImportError as exc:
        raise BotLoadError(f"cannot import bot module {target!r}: {exc}") from None


def is_address(spec: str) -> bool:
    """`host:port`, `[v6]:port` or `unix:/path`, as opposed to a file or module."""
    if spec.startswith(("unix:", "grpc://")):
        return True
    host, sep, port = spec.rpartition(":")
    return bool(sep and host and port.isdigit())


def author_seat(spec: str) -> AuthorSeat:
    """The author's bot from its command-line spec (see engine/arena/cli.py)."""
    if is_address(spec):
        return RemoteSeat(spec, spec.removeprefix("grpc://"))
    target, _, attr = spec.partition(":")
    module = _load_module(target)
    label = Path(target).stem if target.endswith(".py") else target.rsplit(".", 1)[-1]
    if attr:
        obj = getattr(module, attr, None)
        if obj is None:
            raise BotLoadError(f"{target} has no {attr!r}")
        if inspect.isclass(obj):  # one instance per game and seat, like the SDK's factory=
            return LocalSeat(label, None, lambda game_id, seat: obj())
        return LocalSeat(label, obj)
    if callable(getattr(module, "act", None)):
        return LocalSeat(label, module.act)
    if callable(getattr(module, "factory", None)):
        return LocalSeat(label, None, module.factory)
    raise BotLoadError(
        f"{target} has neither an act(observation, legal_actions) function nor a "
        "factory(game_id, seat); name the one to use as FILE.py:NAME"
    )
