"""Rules §6, forfeits: a seat leaves at once and the decision in progress carries on.

How the turn carries on is not in the rules; the choices are written at each step.
"""

from __future__ import annotations

from .base_phase import end_base_phase
from .exploration import after_decision, next_passage, start_resolve, unresolved
from .flow import ended_last_standing
from .holdings import eliminate
from .phases import BASE, DECIDE, POSITION, RESOLVE
from .table import Seat, Table


def forfeit(state: Table, seat: Seat, reason: str) -> None:
    """Rules §6: the seat is eliminated at once; the decision in progress carries on."""
    state.eliminations += 1
    seat.forfeited = True
    state.pending.append({"seat": seat.index, "reason": reason, "kind": "FORFEIT"})
    eliminate(state, seat, reason, state.eliminations)
    if ended_last_standing(state):
        return
    i = seat.index
    if state.phase == RESOLVE:
        _forfeit_in_resolve(state, i)
        return
    if i not in state.order:
        return
    pos = state.order.index(i)
    state.order.remove(i)
    if state.phase == DECIDE and i == state.lead:
        # The lead is gone before the turn was paid for: the decide step restarts
        # with the next seat as lead.
        state.lead = state.next_alive_after(i)
        state.order = state.seats_from(state.lead)
        state.idx = 0
        return
    if pos < state.idx:
        state.idx -= 1
    if state.idx < len(state.order):
        return
    if state.phase == BASE:
        end_base_phase(state)
    elif state.phase == DECIDE:
        state.idx = len(state.order) - 1
        after_decision(state)
    elif state.phase == POSITION:
        start_resolve(state)


def _forfeit_in_resolve(state: Table, i: int) -> None:
    if i in state.res_helpers:
        state.res_helpers.remove(i)
    if i == state.res_owner:
        if not state.res_helpers:
            # Nobody is left at this passage: the card stays, untouched.
            state.attempting = False
            next_passage(state)
            return
        state.res_owner = state.res_helpers.pop(0)
    if not state.attempting or i not in state.committers:
        return
    pos = state.committers.index(i)
    state.committers.remove(i)
    if pos < state.cidx:
        state.cidx -= 1
    if state.cidx >= len(state.committers):
        unresolved(state)
