"""Rules §4: a round starts (with a base phase after the first), turns follow, it ends."""

from __future__ import annotations

from .base_phase import start_base_phase
from .flow import end_game, start_turn
from .phases import AT_BASE
from .table import Table


def start_round(state: Table) -> None:
    """The current lead starts the round: a base phase first, except in round 1."""
    state.round += 1
    state.round_starter = state.lead
    state.pending.append({"round": state.round, "seat": state.lead, "kind": "ROUND_START"})
    if state.round == 1:
        start_turn(state)
    else:
        start_base_phase(state)


def end_turn(state: Table) -> None:
    """Rules §4.2d: the lead passes on (or the turn guard ends the game)."""
    if state.turn >= state.rules.turn_limit:
        end_game(state, "turn_limit")
        return
    state.lead = state.next_alive_after(state.lead)
    start_turn(state)


def end_round(state: Table) -> None:
    """Every seat goes home; the lead passes on and the next round starts."""
    for seat in state.seats:
        seat.position = AT_BASE
        seat.ready = False
    state.attempting = False
    state.pending.append({"round": state.round, "kind": "ROUND_END"})
    if state.turn >= state.rules.turn_limit:
        end_game(state, "turn_limit")
        return
    state.lead = state.next_alive_after(state.lead)
    start_round(state)
