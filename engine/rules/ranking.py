"""End of game ranking and per-seat figures (rules §5)."""

from __future__ import annotations

from typing import Any

from .ruleset import ITEM_KINDS
from .shapes import Result
from .table import Seat, Table


def loot_points(state: Table, seat: Seat) -> int:
    """Secured loot: items in inventory or secured on the way home."""
    points = state.rules.loot_points
    return sum(
        points[state.rows[c].loot]
        for c in seat.items + seat.secured
        if state.rows[c].loot in ITEM_KINDS
    )


def _competition_ranks(keys: list[tuple[Any, ...]], start: int) -> list[int]:
    """Rank 1 = best key (largest); equal keys share a rank (1, 1, 3)."""
    return [start + sum(1 for other in keys if other > key) for key in keys]


def build_result(state: Table) -> Result:
    seats = state.seats
    ranks = [0] * len(seats)
    next_rank = 1
    if state.winner >= 0:
        ranks[state.winner] = 1
        next_rank = 2
    groups: list[list[tuple[int, tuple[int, ...]]]] = [
        # non-eliminated seats: objectives, loot points, torches held
        [
            (s.index, (len(s.completed), loot_points(state, s), len(s.torches) + len(s.stash)))
            for s in seats
            if not s.eliminated and s.index != state.winner
        ],
        # eliminated seats: later elimination ranks higher
        [(s.index, (s.elimination,)) for s in seats if s.eliminated and not s.forfeited],
        # forfeited seats rank below every seat that did not forfeit
        [(s.index, (s.elimination,)) for s in seats if s.forfeited],
    ]
    for group in groups:
        keys = [key for _, key in group]
        for (index, _), rank in zip(group, _competition_ranks(keys, next_rank), strict=True):
            ranks[index] = rank
        next_rank += len(group)

    def ended(s: Seat) -> str:
        if s.index == state.winner:
            return "won"
        if s.forfeited:
            return "forfeited"
        return "eliminated" if s.eliminated else "finished"

    return {
        "reason": state.end_reason,
        "winner": state.winner,
        "turns": state.turn,
        "rounds": state.round,
        "ranks": ranks,
        "seats": [
            {
                "seat": s.index,
                "rank": ranks[s.index],
                "objectives": len(s.completed),
                "completed": list(s.completed),
                "loot_points": loot_points(state, s),
                "torches": len(s.torches) + len(s.stash),
                "faults": s.faults,
                "ended": ended(s),
                "reason": s.reason,
            }
            for s in seats
        ],
    }
