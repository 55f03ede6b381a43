"""Starting an exploration turn and ending the game: where every part of the rules can lead."""

from __future__ import annotations

from .phases import DECIDE, OVER
from .ranking import build_result
from .table import Table


def start_turn(state: Table) -> None:
    """Rules §4.2: a new exploration turn begins with the lead's decide step."""
    state.turn += 1
    state.phase = DECIDE
    state.order = state.seats_from(state.lead)
    state.idx = 0
    for seat in state.seats:
        seat.moves = 0
        seat.ready = False
    state.pending.append({"turn": state.turn, "seat": state.lead, "kind": "TURN_START"})


def end_game(state: Table, reason: str, winner: int = -1) -> None:
    """Rules §5: the game ends at once; the result is fixed now."""
    state.is_over = True
    state.phase = OVER
    state.end_reason = reason
    state.winner = winner
    state.result = build_result(state)
    state.pending.append(
        {"reason": reason, "seat": winner, "ranks": state.result["ranks"], "kind": "GAME_END"}
    )


def ended_last_standing(state: Table) -> bool:
    """Rules §5.2: end the game if at most one seat is left; whether it ended."""
    if len(state.alive()) <= 1:
        end_game(state, "last_standing")
        return True
    return False
