"""The terms of a played match, shared by every part of the runner: its time control,
a seat's spec and transport, a fault, the outcome.

In a module of their own (no imports of the runner's other modules but its network
helpers) so that the clock, the transports and the match loop all depend on the terms
and never on each other: ``match`` used to hold them, and ``clock`` and ``transport``
imported it back (the one import cycle of the code).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from digdown.results import GameResult
from digdown.v1 import bot_pb2
from workers.runner.net import Undecodable

# (CPU seconds used, seconds its threads waited runnable for a CPU), both so far.
CpuUsage = tuple[float, float]


class FaultKind(StrEnum):
    """What went wrong with a seat's answer (the replay's ``faults[].kind``)."""

    TIMEOUT = "timeout"
    UNAVAILABLE = "unavailable"
    ERROR = "error"
    MALFORMED = "malformed"
    TOO_LARGE = "too_large"
    ILLEGAL = "illegal"
    DEAD = "dead"
    UNREACHABLE = "unreachable"


# Fault kinds that a broken network produces as well as a broken bot (the referee judges
# them, workers.runner.blame); the others are the bot's whatever the network does.
TRANSPORT_FAULTS = frozenset({FaultKind.TIMEOUT, FaultKind.UNAVAILABLE})


class SeatTransport(Protocol):
    """What the match loop needs of one seat's bot (see ``workers.runner.transport``)."""

    def handshake(
        self, request: bot_pb2.HandshakeRequest, timeout_s: float
    ) -> bot_pb2.HandshakeReply | Undecodable:
        """The bot's handshake reply; raises ``grpc.RpcError`` (UNIMPLEMENTED is accepted)."""
        ...

    def act(
        self, request: bot_pb2.DecisionRequest, timeout_s: float
    ) -> bot_pb2.DecisionReply | Undecodable:
        """The bot's answer to one decision within ``timeout_s``; raises ``grpc.RpcError``
        (DEADLINE_EXCEEDED when no answer came in time)."""
        ...

    def gone(self) -> bool:
        """Proof that the bot is gone for good (nothing listens, the stream is closed for
        good, its process exited). False when unsure: then a failure stays a fault."""
        ...

    def close(self) -> None:
        """Release what the transport holds (idempotent)."""
        ...


@dataclass(frozen=True)
class TimeControl:
    """Time and size limits of a match (rules §6 plus the protocol's safety limits)."""

    decision_s: float = 1.0  # per-decision deadline
    bank_s: float = 30.0  # per-seat game bank, spent by overruns
    handshake_s: float = 5.0  # waiting for a bot to come up and answer Handshake
    max_reply_bytes: int = 64 * 1024  # a DecisionReply is < 100 bytes; larger is a fault
    max_request_bytes: int = 4 * 1024 * 1024
    probe_s: float = 0.2  # connect probe after UNAVAILABLE (is anything listening?)
    # A process that just died may still hold its port for a moment: probe a few times.
    probe_attempts: int = 3
    probe_interval_s: float = 0.1
    engine_timeout_s: float = 10.0  # every engine call
    engine_retries: int = 2  # extra attempts of an idempotent engine call
    # How long a game whose engine died may wait for an engine to take it back.
    engine_resume_s: float = 30.0
    max_events_per_request: int = 1000  # events sent with one DecisionRequest, newest kept
    match_s: float = 0.0  # wall-clock limit of the whole match (0: none)
    # What a seat whose CPU use is measured (BotSpec.cpu_usage: hosted bots) is charged:
    # "cpu" (its wall time without its waits for a CPU, at least its CPU time; the call's
    # wall deadline widened by cpu_wall_factor; workers/runner/clock.py) or "wall".
    # Other seats are always charged wall time.
    hosted_clock: str = "wall"
    cpu_wall_factor: float = 3.0
    # Protocol 2: one stream per seat to bots that offer it, one Play stream per game
    # to the engine. False: unary calls only (protocol 1), e.g. to compare the two.
    streams: bool = True


TransportFactory = Callable[[TimeControl], SeatTransport]


@dataclass(frozen=True)
class BotSpec:
    """One seat's bot: where it listens, plus labels and an optional liveness check."""

    address: str
    name: str = ""  # label; the handshake's name when empty
    version: str = ""
    # Hosted bots: the worker knows the process (e.g. `lambda: proc.poll() is None`).
    is_alive: Callable[[], bool] | None = None
    # Hosted bots that did not start (the sandbox says why): never dialed, the seat
    # forfeits before the first decision with this reason.
    start_error: str = ""
    # What the replay and every recorded reason call the address (None: the address
    # itself). The ladder passes "remote" or "hosted": its replays and match pages are
    # public, and an endpoint (or a sandbox's socket path) is its owner's business.
    shown_address: str | None = None
    # How the runner reaches the bot: a factory of the seat's transport, called with
    # the match's time control (connected bots: the relay). None: dial `address`
    # (unary or one stream, as the handshake negotiates; workers.runner.transport).
    transport: TransportFactory | None = None
    # (CPU seconds, seconds waiting for a CPU) of the bot's processes so far (hosted bots:
    # the sandbox measures them; None when it cannot now). Read around each decision.
    cpu_usage: Callable[[], CpuUsage | None] | None = None

    def public(self, message: str) -> str:
        """``message`` with every spelling of the address replaced by ``shown_address``."""
        if self.shown_address is None:
            return message
        for form in address_forms(self.address):
            message = message.replace(form, self.shown_address)
        return message


def address_forms(address: str) -> list[str]:
    """How an address may be spelled in gRPC's and our messages, longest first:
    ``host:port``, ``ipv4:host:port``, ``unix:/path``, the bare host or path, the
    bracketed and percent-encoded IPv6 forms. A bare host without a dot, colon or
    slash (a plain word such as ``bot``) is left alone: it would garble the message."""
    forms = {address}
    if address.startswith("unix:"):
        forms.add(address[len("unix:") :])
    else:
        host = address.rpartition(":")[0] if address.count(":") == 1 or "]" in address else address
        bare = host.strip("[]")
        forms.update({host, bare, f"[{bare}]", quote(f"[{bare}]", safe=":"), quote(bare, safe="")})
    shown = [f for f in forms if f == address or (len(f) >= 3 and any(c in f for c in ".:/%"))]
    return sorted(shown, key=len, reverse=True)


@dataclass
class Fault:
    """One fault or forfeit decided by the runner, with its reason (also sent to the engine)."""

    seat: int
    ply: int
    kind: FaultKind | str  # a FaultKind; a plain string only from older callers
    reason: str
    think_time_ms: int = 0
    forfeit: bool = False


@dataclass
class MatchOutcome:
    """What a finished match produced (the replay document included)."""

    game_id: str
    result: dict[str, Any]
    replay: dict[str, Any]
    faults: list[Fault]
    seats: list[dict[str, Any]]
    decisions: int
    duration_s: float
    engine_s: float = 0.0  # time spent in engine calls (resumes included)
    bots_s: float = 0.0  # time spent waiting for bots (handshakes and decisions)
    resumes: int = 0  # times the game was re-created on an engine after one died
    replay_path: Path | None = None
    replay_bytes: int = 0
    verified: bool | None = None

    @property
    def ranks(self) -> list[int]:
        return list(self.result.get("ranks", []))

    @property
    def game_result(self) -> GameResult:
        """The result typed, as the ladder records it (ResultError if the engine's is not
        a result: never recorded then)."""
        return GameResult.from_dict(self.result, len(self.seats))
