"""One record entry takes effect: an action of the acting seat, or a fault (rules §6)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from . import base_phase, exploration
from .actions import Action
from .forfeits import forfeit
from .legal import default_action, legal_actions
from .table import Seat, Table

Handler = Callable[[Table, Seat, Action], None]
_ORDINALS: Final = ("first", "second", "third", "fourth", "fifth")
HANDLERS: Final[dict[str, Handler]] = {**base_phase.HANDLERS, **exploration.HANDLERS}


def play_action(state: Table, action: Action) -> None:
    """The acting seat plays `action` (already known to be legal)."""
    seat = state.seats[state.acting_seat]
    kind = action.kind
    # Every kind called directly, the commonest first (the compiled build calls them natively;
    # through HANDLERS it would go by a Python call).
    if kind == "CONTINUE":
        exploration.continue_(state, seat, action)
    elif kind == "COMMIT":
        exploration.commit(state, seat, action)
    elif kind == "MOVE":
        exploration.move(state, seat, action)
    elif kind == "READY":
        exploration.ready(state, seat, action)
    elif kind == "ATTEMPT":
        exploration.attempt(state, seat, action)
    elif kind == "STOP":
        exploration.stop(state, seat, action)
    elif kind == "EXPLORE":
        exploration.explore(state, seat, action)
    elif kind == "RETURN":
        exploration.return_(state, seat, action)
    elif kind == "PEEK":
        exploration.peek(state, seat, action)
    elif kind == "LEAVE":
        exploration.leave(state, seat, action)
    elif kind == "DONE":
        base_phase.done(state, seat, action)
    elif kind == "DISCARD":
        base_phase.discard(state, seat, action)
    elif kind == "STASH":
        base_phase.stash(state, seat, action)
    elif kind == "UNSTASH":
        base_phase.unstash(state, seat, action)
    elif kind == "TRADE":
        base_phase.trade(state, seat, action)
    elif kind == "GIVE":
        base_phase.give(state, seat, action)
    elif kind == "EXCHANGE":
        base_phase.exchange(state, seat, action)
    else:
        HANDLERS[kind](state, seat, action)


def play_fault(state: Table, reason: str) -> None:
    """A fault of the acting seat: count it and play the §6 default; the last one forfeits."""
    seat = state.seats[state.acting_seat]
    seat.faults += 1
    state.pending.append(
        {"seat": seat.index, "reason": reason, "amount": seat.faults, "kind": "FAULT"}
    )
    limit = state.rules.fault_limit
    if seat.faults >= limit:
        nth = _ORDINALS[limit - 1] if limit <= len(_ORDINALS) else f"{limit}th"
        forfeit(state, seat, f"{nth} fault: {reason}")
        return
    play_action(state, default_action(state, legal_actions(state)))
