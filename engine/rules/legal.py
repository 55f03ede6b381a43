"""Which actions are legal now (rules §4, §6), the §6 default, and why an action is not legal."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import actions as A
from .actions import Action
from .ruleset import ITEM_KINDS, TORCH

if TYPE_CHECKING:
    from .state import Seat, State

_DISCARD = {kind: Action("DISCARD", item=kind) for kind in (TORCH, *ITEM_KINDS)}
_TRADE = {kind: Action("TRADE", item=kind) for kind in ITEM_KINDS}
_MOVE = [Action("MOVE", passage=p) for p in range(8)]
_GIVE = {(k, seat): Action("GIVE", item=k, to_seat=seat) for k in ITEM_KINDS for seat in range(4)}
_EXCHANGE: dict[str, Action] = {}


def _exchange(recipe: str) -> Action:
    action = _EXCHANGE.get(recipe)
    if action is None:
        action = _EXCHANGE[recipe] = Action("EXCHANGE", recipe=recipe)
    return action


def legal_actions(state: State) -> list[Action]:
    seat = state.seats[state.acting_seat]
    phase = state.phase
    if phase == "DECIDE":
        return _decide(state, seat)
    if phase == "POSITION":
        return _position(state, seat)
    if phase == "RESOLVE":
        return _resolve(state, seat)
    return _base(state, seat)


def _decide(state: State, seat: Seat) -> list[Action]:
    if seat.index != state.lead:
        return [A.CONTINUE, A.RETURN]
    return [A.EXPLORE, A.RETURN] if seat.torches else [A.RETURN]


def _position(state: State, seat: Seat) -> list[Action]:
    at = seat.position
    at_card = at >= 0 and bool(state.passages[at])
    within_limit = seat.moves < state.rules.position_action_limit
    legal: list[Action] = []
    if at_card:
        legal.append(A.READY)
    if within_limit or not at_card:
        legal.extend(_MOVE[p] for p, cards in enumerate(state.passages) if cards and p != at)
    if (
        within_limit
        and at_card
        and not state.top_known(at)
        and len(state.tiles) < state.rules.tiles
        and seat.torches
    ):
        legal.append(A.PEEK)
    return legal


def _resolve(state: State, seat: Seat) -> list[Action]:
    if not state.attempting:
        return [A.ATTEMPT, A.LEAVE]
    kind = state.rows[state.passages[state.res_passage][-1]].tool
    table = state.tool_table
    commits = [
        Action("COMMIT", tool_id=t)
        for t in seat.tools
        if t in seat.active and table[t].kind == kind
    ]
    commits.append(A.STOP)
    return commits


def _over_capacity(seat: Seat) -> bool:
    return seat.inventory_size > seat.capacity


def done_allowed(seat: Seat) -> bool:
    return not _over_capacity(seat) and (bool(seat.torches) or not seat.stash)


def _item_counts(state: State, seat: Seat) -> dict[str, int]:
    """Items in inventory by kind, in the order of ITEM_KINDS (only kinds held)."""
    rows = state.rows
    counts = dict.fromkeys(ITEM_KINDS, 0)
    for c in seat.items:
        counts[rows[c].loot] += 1
    return {k: n for k, n in counts.items() if n}


def _base(state: State, seat: Seat) -> list[Action]:
    rules = state.rules
    counts = _item_counts(state, seat)
    if seat.base_actions >= rules.base_action_limit:
        if done_allowed(seat):
            return [A.DONE]
        if _over_capacity(seat):
            return [_DISCARD[k] for k in ((TORCH,) if seat.torches else ()) + tuple(counts)]
        return [A.UNSTASH]
    legal: list[Action] = []
    for recipe in rules.recipes:
        if state.exchange[recipe.name] and all(counts.get(k, 0) >= n for k, n in recipe.cost):
            legal.append(_exchange(recipe.name))
    legal.extend(_TRADE[k] for k in counts if k in rules.trade)
    receivers = [
        other.index
        for other in state.seats
        if other is not seat and not other.eliminated and other.inventory_size < other.capacity
    ]
    legal.extend(_GIVE[k, r] for k in counts for r in receivers)
    if seat.torches:
        legal.append(A.STASH)
    if seat.stash:
        legal.append(A.UNSTASH)
    if seat.torches:
        legal.append(_DISCARD[TORCH])
    legal.extend(_DISCARD[k] for k in counts)
    if done_allowed(seat):
        legal.append(A.DONE)
    return legal


def default_action(state: State) -> Action:
    """Rules §6: what a fault plays for the acting seat."""
    seat = state.seats[state.acting_seat]
    legal = state.legal_actions()
    if state.phase == "DECIDE":
        if seat.index != state.lead:
            return A.CONTINUE
        return A.EXPLORE if A.EXPLORE in legal else A.RETURN
    if state.phase == "POSITION":
        if A.READY in legal:
            return A.READY
        return next(a for a in legal if a.kind == "MOVE")
    if state.phase == "RESOLVE":
        return A.STOP if state.attempting else A.LEAVE
    if A.DONE in legal:
        return A.DONE
    if _over_capacity(seat):
        for kind in state.rules.default_discard_order:
            if _DISCARD[kind] in legal:
                return _DISCARD[kind]
    return A.UNSTASH


def why_illegal(state: State, action: Action) -> str:
    """A message a bot author can act on."""
    seat = state.acting_seat
    phase = state.phase
    legal = state.legal_actions()
    kinds = sorted({a.kind for a in legal})
    if action.kind not in kinds:
        return (
            f"{action} is not legal for seat {seat} in the {phase} step; "
            f"legal kinds now: {', '.join(kinds)}"
        )
    same = ", ".join(str(a) for a in legal if a.kind == action.kind)
    return f"{action} is not legal for seat {seat} now; legal {action.kind} actions: {same}"
