"""Which actions are legal now (rules §4, §6), the §6 default, and why an action is not legal."""

from __future__ import annotations

from . import actions as A
from .actions import Action
from .phases import DECIDE, POSITION, RESOLVE
from .ruleset import ITEM_KINDS, TORCH
from .table import Seat, Table


def _move(passage: int) -> Action:
    return A.MOVES[passage] if passage < len(A.MOVES) else A.canonical("MOVE", passage)


def _commit(tool_id: int) -> Action:
    return A.COMMITS[tool_id] if tool_id < len(A.COMMITS) else A.canonical("COMMIT", tool_id)


def _item_action(kind: str, item: str) -> Action:
    found = (A.TRADES if kind == "TRADE" else A.DISCARDS).get(item)
    return found if found is not None else A.canonical(kind, item)


def _give(item: str, to_seat: int) -> Action:
    found = A.GIVES.get((item, to_seat))
    return found if found is not None else A.canonical("GIVE", item, to_seat)


# EXCHANGE by recipe (the recipes are the ruleset's: filled as they are first listed).
_EXCHANGES: dict[str, Action] = {}


def _exchange(recipe: str) -> Action:
    found = _EXCHANGES.get(recipe)
    if found is None:
        found = _EXCHANGES[recipe] = A.canonical("EXCHANGE", recipe)
    return found


def legal_actions(state: Table) -> list[Action]:
    """The complete list of legal actions of the acting seat (the game must not be over)."""
    seat = state.seats[state.acting_seat]
    phase = state.phase
    if phase == DECIDE:
        return _decide(state, seat)
    if phase == POSITION:
        return _position(state, seat)
    if phase == RESOLVE:
        return _resolve(state, seat)
    return _base(state, seat)


def _decide(state: Table, seat: Seat) -> list[Action]:
    if seat.index != state.lead:
        return [A.CONTINUE, A.RETURN]
    return [A.EXPLORE, A.RETURN] if seat.torches else [A.RETURN]


def _position(state: Table, seat: Seat) -> list[Action]:
    at = seat.position
    at_card = at >= 0 and bool(state.passages[at])
    within_limit = seat.moves < state.rules.position_action_limit
    legal: list[Action] = [A.READY] if at_card else []
    if within_limit or not at_card:
        passages = state.passages
        for p in range(len(passages)):
            if passages[p] and p != at:
                legal.append(_move(p))
    if (
        within_limit
        and at_card
        and not state.top_known(at)
        and len(state.tiles) < state.rules.tiles
        and seat.torches
    ):
        legal.append(A.PEEK)
    return legal


def _resolve(state: Table, seat: Seat) -> list[Action]:
    if not state.attempting:
        return [A.ATTEMPT, A.LEAVE]
    kind = state.rows[state.passages[state.res_passage][-1]].tool
    table = state.tool_table
    commits = [_commit(t) for t in seat.tools if t in seat.active and table[t].kind == kind]
    commits.append(A.STOP)
    return commits


def _over_capacity(seat: Seat) -> bool:
    return seat.inventory_size > seat.capacity


def done_allowed(seat: Seat) -> bool:
    return not _over_capacity(seat) and (bool(seat.torches) or not seat.stash)


def _held_kinds(state: Table, seat: Seat) -> dict[str, int]:
    """Items in inventory by kind, in the order of ITEM_KINDS (only kinds held)."""
    items = seat.items
    if not items:
        return {}
    rows = state.rows
    if len(items) == 1:
        return {rows[items[0]].loot: 1}
    held: dict[str, int] = {}
    for cid in items:
        kind = rows[cid].loot
        held[kind] = held.get(kind, 0) + 1
    if len(held) == 1:
        return held
    return {k: held[k] for k in ITEM_KINDS if k in held}


def _affords(counts: dict[str, int], cost: tuple[tuple[str, int], ...]) -> bool:
    # A loop, not all(<generator>): mypyc makes a generator an object per call.
    for kind, n in cost:  # noqa: SIM110
        if counts.get(kind, 0) < n:
            return False
    return True


def _base(state: Table, seat: Seat) -> list[Action]:
    rules = state.rules
    counts = _held_kinds(state, seat)
    if seat.base_actions >= rules.base_action_limit:
        if done_allowed(seat):
            return [A.DONE]
        if _over_capacity(seat):
            kinds = ((TORCH,) if seat.torches else ()) + tuple(counts)
            return [_item_action("DISCARD", k) for k in kinds]
        return [A.UNSTASH]
    legal: list[Action] = []
    for recipe in rules.recipes:
        if state.exchange[recipe.name] and _affords(counts, recipe.cost):
            legal.append(_exchange(recipe.name))
    if counts:
        trade = rules.trade
        for k in counts:
            if k in trade:
                legal.append(_item_action("TRADE", k))
        receivers = [
            other.index
            for other in state.seats
            if other is not seat
            and not other.eliminated
            and len(other.torches) + len(other.items) < other.capacity
        ]
        for k in counts:
            for r in receivers:
                legal.append(_give(k, r))
    if seat.torches:
        legal.append(A.STASH)
    if seat.stash:
        legal.append(A.UNSTASH)
    if seat.torches:
        legal.append(A.DISCARDS[TORCH])
    for k in counts:
        legal.append(_item_action("DISCARD", k))
    if done_allowed(seat):
        legal.append(A.DONE)
    return legal


def default_action(state: Table, legal: list[Action]) -> Action:
    """Rules §6: what a fault plays for the acting seat, given its `legal` actions."""
    seat = state.seats[state.acting_seat]
    if state.phase == DECIDE:
        if seat.index != state.lead:
            return A.CONTINUE
        return A.EXPLORE if A.EXPLORE in legal else A.RETURN
    if state.phase == POSITION:
        if A.READY in legal:
            return A.READY
        return next(a for a in legal if a.kind == "MOVE")
    if state.phase == RESOLVE:
        return A.STOP if state.attempting else A.LEAVE
    if A.DONE in legal:
        return A.DONE
    if _over_capacity(seat):
        for kind in state.rules.default_discard_order:
            if _item_action("DISCARD", kind) in legal:
                return _item_action("DISCARD", kind)
    return A.UNSTASH


def why_illegal(state: Table, action: Action, legal: list[Action]) -> str:
    """A message a bot author can act on."""
    seat = state.acting_seat
    kinds = sorted({a.kind for a in legal})
    if action.kind not in kinds:
        return (
            f"{action} is not legal for seat {seat} in the {state.phase} step; "
            f"legal kinds now: {', '.join(kinds)}"
        )
    same = ", ".join(str(a) for a in legal if a.kind == action.kind)
    return f"{action} is not legal for seat {seat} now; legal {action.kind} actions: {same}"
