"""Rules §4.2, an exploration turn: (a) decide, (b) position, (c) reveal and resolve."""

from __future__ import annotations

from .actions import Action
from .flow import end_game
from .holdings import lose_loot, pay_torches, secure_loot, torches_held
from .phases import POSITION, RESOLVE
from .rounds import end_round, end_turn
from .ruleset import LOOT_KINDS
from .table import Seat, Table

# ------------------------------------------------------------------ decide (a)


def explore(state: Table, seat: Seat, action: Action) -> None:
    state.pending.append({"seat": seat.index, "kind": "EXPLORE"})
    after_decision(state)


def continue_(state: Table, seat: Seat, action: Action) -> None:
    state.pending.append({"seat": seat.index, "kind": "CONTINUE"})
    after_decision(state)


def after_decision(state: Table) -> None:
    """The next seat decides; once all went on, the lead pays and positioning starts."""
    state.idx += 1
    if state.idx < len(state.order):
        return
    pay_torches(state, state.seats[state.lead], state.rules.explore_cost)
    state.phase = POSITION
    state.order = state.seats_from(state.lead)
    state.idx = 0


def return_(state: Table, seat: Seat, action: Action) -> None:
    """Rules §4.2a (§11 in dd-2): the round ends; who pays what for whose loot.

    The caller pays the return cost; paying less, its own loot is lost. Every
    other seat holding loot pays the caller the rider fee (none in dd-1) or
    loses that loot; the rest is secured, and every seat goes home.
    """
    rules = state.rules
    paid_in_full = torches_held(seat, with_stash=rules.return_from_stash) >= rules.return_cost
    paid = pay_torches(state, seat, rules.return_cost, from_stash=rules.return_from_stash)
    state.pending.append({"seat": seat.index, "amount": paid, "kind": "RETURN"})
    if not paid_in_full:
        lose_loot(state, seat)
    for other in state.seats_from(seat.index):
        rider = state.seats[other]
        if rider is not seat and rules.rider_fee and _holds_loot(state, rider):
            fee = pay_torches(
                state, rider, rules.rider_fee, from_stash=rules.return_from_stash, to=seat
            )
            if fee < rules.rider_fee:
                lose_loot(state, rider)
        secure_loot(state, rider)
    end_round(state)


def _holds_loot(state: Table, seat: Seat) -> bool:
    """Whether the seat's unsecured pile holds a card with loot (rules §11: torches or an item)."""
    return any(state.rows[c].loot in LOOT_KINDS for c in seat.unsecured)


# ---------------------------------------------------------------- position (b)


def move(state: Table, seat: Seat, action: Action) -> None:
    assert action.passage is not None
    seat.position = action.passage
    seat.moves += 1
    state.pending.append({"seat": seat.index, "passage": action.passage, "kind": "MOVE"})


def peek(state: Table, seat: Seat, action: Action) -> None:
    p = seat.position
    pay_torches(state, seat, state.rules.peek_cost)
    state.tiles.add(p)
    top = state.passages[p][-1]
    state.make_known(top)
    seat.moves += 1
    state.pending.append(
        {"seat": seat.index, "passage": p, "card": state.card_dicts[top], "kind": "PEEK"}
    )


def ready(state: Table, seat: Seat, action: Action) -> None:
    seat.ready = True
    state.pending.append({"seat": seat.index, "passage": seat.position, "kind": "READY"})
    state.idx += 1
    if state.idx >= len(state.order):
        start_resolve(state)


# ------------------------------------------------------- reveal and resolve (c)


def start_resolve(state: Table) -> None:
    state.phase = RESOLVE
    occupied = {state.seats[s].position for s in state.order}
    state.to_resolve = [
        p for p in range(state.rules.passages) if state.passages[p] and p in occupied
    ]
    next_passage(state)


def next_passage(state: Table) -> None:
    """Reveal the top card of the next passage with a seat in front; or end the turn."""
    while state.to_resolve:
        p = state.to_resolve.pop(0)
        at = [s for s in state.seats_from(state.lead) if state.seats[s].position == p]
        if not at or not state.passages[p]:
            continue
        card = state.passages[p][-1]
        state.make_known(card)
        state.res_passage = p
        state.res_owner = at[0]
        state.res_helpers = at[1:]
        state.attempting = False
        state.committers = []
        state.cidx = 0
        state.committed = 0
        state.pending.append(
            {
                "passage": p,
                "seat": state.res_owner,
                "card": state.card_dicts[card],
                "kind": "REVEAL",
            }
        )
        return
    state.res_passage = -1
    end_turn(state)


def attempt(state: Table, seat: Seat, action: Action) -> None:
    state.attempting = True
    state.committers = [state.res_owner, *state.res_helpers]
    state.cidx = 0
    state.committed = 0
    state.pending.append({"seat": seat.index, "passage": state.res_passage, "kind": "ATTEMPT"})


def leave(state: Table, seat: Seat, action: Action) -> None:
    state.pending.append({"seat": seat.index, "passage": state.res_passage, "kind": "LEAVE"})
    unresolved(state)


def commit(state: Table, seat: Seat, action: Action) -> None:
    tool = action.tool_id
    assert tool is not None
    seat.active.discard(tool)
    state.committed += state.tool_table[tool].strength
    state.pending.append(
        {"seat": seat.index, "tool_id": tool, "amount": state.committed, "kind": "COMMIT"}
    )
    if state.committed >= state.strength[state.passages[state.res_passage][-1]]:
        resolved(state)


def stop(state: Table, seat: Seat, action: Action) -> None:
    state.pending.append({"seat": seat.index, "kind": "STOP"})
    state.cidx += 1
    if state.cidx >= len(state.committers):
        unresolved(state)


def resolved(state: Table) -> None:
    """Rules §4.2c.3: the card goes to the owner's loot; its loot may complete an objective."""
    p = state.res_passage
    card = state.passages[p].pop()
    state.known.discard(card)
    state.tiles.discard(p)
    owner = state.seats[state.res_owner]
    owner.unsecured.append(card)
    state.attempting = False
    state.pending.append(
        {"seat": owner.index, "passage": p, "card": state.card_dicts[card], "kind": "RESOLVED"}
    )
    loot = state.rows[card].loot
    if loot in state.objectives and loot not in owner.completed:
        owner.completed.append(loot)
        state.pending.append({"seat": owner.index, "objective": loot, "kind": "OBJECTIVE"})
        if len(owner.completed) == len(state.objectives):
            end_game(state, "won", owner.index)
            return
    if _exhausted(state.passages):
        end_game(state, "cave_exhausted")
        return
    next_passage(state)


def _exhausted(passages: list[list[int]]) -> bool:
    """Whether every passage is empty (a loop: mypyc calls the builtin any() through Python)."""
    for p in passages:  # noqa: SIM110
        if p:
            return False
    return True


def unresolved(state: Table) -> None:
    """Rules §4.2c.4: the card stays and deals its damage; at 0 hearts everyone respawns."""
    card = state.passages[state.res_passage][-1]
    state.attempting = False
    state.pending.append(
        {"passage": state.res_passage, "card": state.card_dicts[card], "kind": "UNRESOLVED"}
    )
    damage = state.damage[card]
    if damage:
        state.hearts = max(0, state.hearts - damage)
        state.pending.append({"amount": damage, "hearts": state.hearts, "kind": "DAMAGE"})
        if state.hearts == 0:
            respawn(state)
            return
    next_passage(state)


def respawn(state: Table) -> None:
    """Rules §4.2c.5: everyone respawns, no torches paid, unsecured loot is lost."""
    state.pending.append({"round": state.round, "kind": "RESPAWN"})
    for seat_index in state.seats_from(state.lead):
        lose_loot(state, state.seats[seat_index])
    state.to_resolve = []
    state.res_passage = -1
    end_round(state)


HANDLERS = {
    "EXPLORE": explore,
    "CONTINUE": continue_,
    "RETURN": return_,
    "MOVE": move,
    "PEEK": peek,
    "READY": ready,
    "ATTEMPT": attempt,
    "LEAVE": leave,
    "COMMIT": commit,
    "STOP": stop,
}
