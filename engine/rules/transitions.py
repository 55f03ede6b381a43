"""One record entry takes effect: an action of the acting seat, or a fault (rules §6)."""

from __future__ import annotations

from collections.abc import Callable

from . import base_phase, exploration
from .actions import Action
from .forfeits import forfeit
from .legal import default_action, legal_actions
from .table import Seat, Table

Handler = Callable[[Table, Seat, Action], None]
_ORDINALS = ("first", "second", "third", "fourth", "fifth")
HANDLERS: dict[str, Handler] = {**base_phase.HANDLERS, **exploration.HANDLERS}


def play_action(state: Table, action: Action) -> None:
    """The acting seat plays `action` (already known to be legal)."""
    HANDLERS[action.kind](state, state.seats[state.acting_seat], action)


def play_fault(state: Table, reason: str) -> None:
    """A fault of the acting seat: count it and play the §6 default; the last one forfeits."""
    seat = state.seats[state.acting_seat]
    seat.faults += 1
    state.emit("FAULT", seat=seat.index, reason=reason, amount=seat.faults)
    limit = state.rules.fault_limit
    if seat.faults >= limit:
        nth = _ORDINALS[limit - 1] if limit <= len(_ORDINALS) else f"{limit}th"
        forfeit(state, seat, f"{nth} fault: {reason}")
        return
    play_action(state, default_action(state, legal_actions(state)))
