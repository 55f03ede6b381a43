"""Rules §4.1, the base phase: what a seat does at home between rounds."""

from __future__ import annotations

from bisect import insort

from .actions import Action
from .flow import ended_last_standing, start_turn
from .holdings import eliminate, take_torches
from .phases import BASE
from .ruleset import ITEM_KINDS, TORCH
from .table import Seat, Table


def start_base_phase(state: Table) -> None:
    """The automatic part (hearts, tools, secured loot into inventories), then base actions."""
    state.hearts = state.rules.hearts
    for seat in state.seats:
        seat.active = set(seat.tools)
    state.pending.append({"hearts": state.hearts, "kind": "BASE_REFILL"})
    for seat_index in state.seats_from(state.round_starter):
        seat = state.seats[seat_index]
        if not seat.secured:
            continue
        moved = [state.card_dicts[c] for c in seat.secured]
        for cid in seat.secured:
            row = state.rows[cid]
            if row.loot in ITEM_KINDS:
                insort(seat.items, cid)
                continue
            state.box.append(cid)
            if row.loot == TORCH:
                take_torches(state, seat, row.torches)
        seat.secured = []
        state.pending.append({"seat": seat_index, "cards": moved, "kind": "LOOT_TO_INVENTORY"})
    state.phase = BASE
    state.order = state.seats_from(state.round_starter)
    state.idx = 0
    for seat in state.seats:
        seat.base_actions = 0


def end_base_phase(state: Table) -> None:
    """Seats without a torch anywhere are eliminated; then the round's first turn."""
    state.eliminations += 1
    for seat_index in state.seats_from(state.round_starter):
        seat = state.seats[seat_index]
        if not seat.torches and not seat.stash:
            eliminate(state, seat, "no torch in inventory or stash", state.eliminations)
    if ended_last_standing(state):
        return
    if state.seats[state.lead].eliminated:
        state.lead = state.next_alive_after(state.lead)
        state.round_starter = state.lead
    start_turn(state)


def exchange(state: Table, seat: Seat, action: Action) -> None:
    recipe = next(r for r in state.rules.recipes if r.name == action.recipe)
    paid = []
    for kind, count in recipe.cost:
        for cid in state.items_of(seat, kind)[:count]:
            seat.items.remove(cid)
            state.box.append(cid)
            paid.append(state.card_dicts[cid])
    tool = state.exchange[recipe.name].pop(0)
    seat.tools.append(tool)
    seat.active.add(tool)
    state.pending.append(
        {
            "seat": seat.index,
            "recipe": recipe.name,
            "tool_id": tool,
            "cards": paid,
            "kind": "EXCHANGE",
        }
    )
    seat.base_actions += 1


def trade(state: Table, seat: Seat, action: Action) -> None:
    item = _item(action)
    cid = state.items_of(seat, item)[0]
    seat.items.remove(cid)
    state.box.append(cid)
    got = take_torches(state, seat, state.rules.trade[item])
    state.pending.append({"seat": seat.index, "item": item, "amount": got, "kind": "TRADE"})
    seat.base_actions += 1


def give(state: Table, seat: Seat, action: Action) -> None:
    item = _item(action)
    assert action.to_seat is not None
    cid = state.items_of(seat, item)[0]
    seat.items.remove(cid)
    insort(state.seats[action.to_seat].items, cid)
    state.pending.append(
        {"seat": seat.index, "to_seat": action.to_seat, "item": item, "kind": "GIVE"}
    )
    seat.base_actions += 1


def stash(state: Table, seat: Seat, action: Action) -> None:
    insort(seat.stash, seat.torches.pop(0))
    state.pending.append({"seat": seat.index, "kind": "STASH"})
    seat.base_actions += 1


def unstash(state: Table, seat: Seat, action: Action) -> None:
    insort(seat.torches, seat.stash.pop(0))
    state.pending.append({"seat": seat.index, "kind": "UNSTASH"})
    seat.base_actions += 1


def discard(state: Table, seat: Seat, action: Action) -> None:
    item = _item(action)
    if item == TORCH:
        cid = seat.torches.pop(0)
    else:
        cid = state.items_of(seat, item)[0]
        seat.items.remove(cid)
    state.box.append(cid)
    state.pending.append({"seat": seat.index, "item": item, "kind": "DISCARD"})
    seat.base_actions += 1


def done(state: Table, seat: Seat, action: Action) -> None:
    state.pending.append({"seat": seat.index, "kind": "DONE"})
    state.idx += 1
    if state.idx >= len(state.order):
        end_base_phase(state)


def _item(action: Action) -> str:
    assert action.item is not None, "legal_actions only lists actions with their arguments"
    return action.item


HANDLERS = {
    "EXCHANGE": exchange,
    "TRADE": trade,
    "GIVE": give,
    "STASH": stash,
    "UNSTASH": unstash,
    "DISCARD": discard,
    "DONE": done,
}
