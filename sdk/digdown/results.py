"""The result of a played game as frozen dataclasses: what a match runner hands the ladder.

Beside ``digdown.types`` (the shapes a bot reads) because both ends use it: the
match runner builds a ``GameResult`` from the engine's ``Result`` once, checked
(``GameResult.from_dict``), and the ladder's ``match_finish`` takes it typed,
so nothing downstream re-validates a mapping field by field. The field names are
the proto's (protos/digdown/v1/game.proto, ``Result`` and ``SeatResult``);
``to_dict`` gives back the engine's dict (docs/engine-api.md) that is stored, typed as
``digdown.types.Result``: the value here, its JSON form there, one type for each.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from digdown import types


class ResultError(ValueError):
    """A result that is not a game's result (its message says which field is wrong)."""


class EndReason(StrEnum):
    """Why the game ended (``Result.reason``)."""

    WON = "won"
    LAST_STANDING = "last_standing"
    CAVE_EXHAUSTED = "cave_exhausted"
    TURN_LIMIT = "turn_limit"


class SeatEnd(StrEnum):
    """How one seat's game ended (``SeatResult.ended``)."""

    WON = "won"
    FINISHED = "finished"
    ELIMINATED = "eliminated"
    FORFEITED = "forfeited"


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ResultError(f"result: {what} must be an integer")
    return value


@dataclass(frozen=True)
class SeatResult:
    """One seat's part of the result."""

    seat: int
    rank: int
    ended: SeatEnd | None = None  # None: not said (an older engine's result)
    faults: int = 0
    loot_points: int | None = None
    objectives: int = 0
    completed: tuple[str, ...] = ()
    torches: int = 0
    reason: str = ""  # why it ended so (e.g. the forfeit reason)

    @property
    def forfeited(self) -> bool:
        return self.ended is SeatEnd.FORFEITED

    def to_dict(self) -> types.SeatResult:
        # The proto's field order (the engine's dict); loot_points only when known.
        ended = "" if self.ended is None else str(self.ended)
        if self.loot_points is None:
            return {
                "seat": self.seat,
                "rank": self.rank,
                "objectives": self.objectives,
                "completed": list(self.completed),
                "torches": self.torches,
                "faults": self.faults,
                "ended": ended,
                "reason": self.reason,
            }
        return {
            "seat": self.seat,
            "rank": self.rank,
            "objectives": self.objectives,
            "completed": list(self.completed),
            "loot_points": self.loot_points,
            "torches": self.torches,
            "faults": self.faults,
            "ended": ended,
            "reason": self.reason,
        }


@dataclass(frozen=True)
class GameResult:
    """The outcome of a finished game: a rank per seat and how each seat ended."""

    reason: EndReason
    winner: int  # a seat, or -1
    ranks: tuple[int, ...]
    seats: tuple[SeatResult, ...]  # by seat; a seat the engine said nothing of has rank only
    turns: int = 0
    rounds: int = 0

    def __post_init__(self) -> None:
        n = len(self.ranks)
        if not 2 <= n <= 4:
            raise ResultError(f"result: ranks must list 2 to 4 seats, not {n}")
        if not -1 <= self.winner < n:
            raise ResultError("result: winner must be a seat or -1")
        if any(not 1 <= r <= n for r in self.ranks):
            raise ResultError(f"result: ranks must be between 1 and {n}")
        if [s.seat for s in self.seats] != list(range(n)):
            raise ResultError("result: one seat result per seat, in seat order")
        for s in self.seats:
            if s.rank != self.ranks[s.seat]:
                raise ResultError(f"result: seat {s.seat} rank disagrees with ranks")

    @classmethod
    def from_dict(cls, result: Mapping[str, Any], seats: int | None = None) -> GameResult:
        """Check the engine's Result dict (docs/engine-api.md) once; ``seats``: how many
        seats it must have (ResultError otherwise)."""
        if not isinstance(result, Mapping):
            raise ResultError("result must be an object")
        try:
            reason = EndReason(str(result.get("reason")))
        except ValueError:
            raise ResultError(
                f"result: reason must be one of {', '.join(r.value for r in EndReason)}"
            ) from None
        ranks_raw = result.get("ranks")
        if not isinstance(ranks_raw, list | tuple) or (
            seats is not None and len(ranks_raw) != seats
        ):
            raise ResultError(f"result: ranks must list one rank per seat ({seats or 'n'})")
        ranks = tuple(_int(r, "rank") for r in ranks_raw)
        n = len(ranks)
        seats_raw = result.get("seats", [])
        if not isinstance(seats_raw, list | tuple):
            raise ResultError("result: seats must be a list")
        by_seat: dict[int, SeatResult] = {}
        for item in seats_raw:
            if not isinstance(item, Mapping):
                raise ResultError("result: each seat result must be an object")
            s = _int(item.get("seat"), "seat")
            if not 0 <= s < n:
                raise ResultError(f"result: seat {s} is not in this match")
            if "rank" in item and item["rank"] != ranks[s]:
                raise ResultError(f"result: seat {s} rank disagrees with ranks")
            by_seat[s] = _seat(item, s, ranks[s])
        return cls(
            reason=reason,
            winner=_int(result.get("winner"), "winner"),
            ranks=ranks,
            seats=tuple(by_seat.get(s) or SeatResult(seat=s, rank=ranks[s]) for s in range(n)),
            turns=_int(result.get("turns") or 0, "turns"),
            rounds=_int(result.get("rounds") or 0, "rounds"),
        )

    def to_dict(self) -> types.Result:
        """The engine's Result dict (what the ladder stores with the result)."""
        return {
            "reason": str(self.reason),
            "winner": self.winner,
            "turns": self.turns,
            "rounds": self.rounds,
            "ranks": list(self.ranks),
            "seats": [s.to_dict() for s in self.seats],
        }


def _seat(item: Mapping[str, Any], seat: int, rank: int) -> SeatResult:
    ended_raw = item.get("ended") or ""
    try:
        ended = SeatEnd(ended_raw) if ended_raw else None
    except ValueError:
        raise ResultError(
            f"result: seat {seat} ended must be one of {', '.join(e.value for e in SeatEnd)}"
        ) from None
    loot = item.get("loot_points")
    completed = item.get("completed") or ()
    return SeatResult(
        seat=seat,
        rank=rank,
        ended=ended,
        faults=max(0, int(item.get("faults") or 0)),
        loot_points=loot if isinstance(loot, int) and not isinstance(loot, bool) else None,
        objectives=int(item.get("objectives") or 0),
        completed=tuple(str(c) for c in completed) if isinstance(completed, list | tuple) else (),
        torches=int(item.get("torches") or 0),
        reason=str(item.get("reason") or ""),
    )
