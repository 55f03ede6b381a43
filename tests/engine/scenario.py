"""Build a game in a chosen situation, for tests.

A scenario names the cave contents (card names, bottom to top), the hearts,
and what each seat holds; every card still comes from the box of 120, so card
conservation holds in scenarios too. Cave cards the scenario does not use go
to the box. A scenario's record does not replay (its holdings were set by
hand), so it is marked `"scenario": true`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.rules import ACTION_ARGS, RULESETS, Action, State
from engine.rules.actions import INT_ARGS
from engine.rules.cards import cave_rows_by_id, starting_tools
from engine.rules.phases import BASE
from engine.rules.rounds import start_round
from engine.rules.ruleset import CaveRow


@dataclass
class SeatSpec:
    """What one seat holds. Tools by name: 'stone sword', 'iron pickaxe', 'diamond sword', ..."""

    torches: int = 5
    stash: int = 0
    tools: list[str] | None = None  # None: the seat keeps its starting tools
    items: list[str] = field(default_factory=list)  # item kinds: IRON, GOLD, ...
    unsecured: list[str] = field(default_factory=list)  # cave card names
    secured: list[str] = field(default_factory=list)
    completed: list[str] = field(default_factory=list)


def _take_card(rows: Sequence[CaveRow], pool: list[int], name: str) -> int:
    """A cave card id by name ('Gold Ore' or 'STONE:Gold Ore'), taken out of `pool`."""
    material, _, card_name = name.rpartition(":")
    for cid in pool:
        row = rows[cid]
        if row.name == card_name and (not material or row.material == material):
            pool.remove(cid)
            return cid
    raise ValueError(f"no {name!r} card left for the scenario")


def _take_item(state: State, pool: list[int], kind: str) -> int:
    for cid in pool:
        if state.rows[cid].loot == kind:
            pool.remove(cid)
            return cid
    raise ValueError(f"no card with loot {kind} left for the scenario")


def _take_tool(state: State, seat_index: int, name: str, basic_pool: list[int]) -> int:
    words = name.upper().split()
    if len(words) != 2:
        raise ValueError(f"tool names are like 'stone sword', got {name!r}")
    grade, kind = words
    if grade == "STONE":
        for tid in basic_pool:
            if state.tool_table[tid].kind == kind:
                basic_pool.remove(tid)
                return tid
        raise ValueError(f"no stone {kind.lower()} left")
    stack = state.exchange[f"{grade}_{kind}"]
    if not stack:
        raise ValueError(f"no {name} left in the exchange stack")
    return stack.pop(0)


def scenario(
    *,
    passages: list[list[str]],
    seats: list[SeatSpec],
    difficulty: str = "normal",
    hearts: int = 4,
    lead: int = 0,
    known: list[int] | None = None,
    sleeved: list[tuple[int, int]] | None = None,
    base_phase: bool = False,
    ruleset: str = "dd-1",
) -> State:
    """A game at the start of an exploration turn (or of a base phase) in the given situation.

    `passages` lists card names bottom to top for each of the four passages;
    `known` names passages whose top card is known (with a torch tile);
    `sleeved` names (passage, position from the bottom) cards that carry a sleeve.
    """
    rules = RULESETS[ruleset]
    rows = cave_rows_by_id(rules)
    n = len(seats)
    # Build with an empty cave and every cave card in a pool, then lay out by name.
    config = {"seed": 0, "num_seats": n, "difficulty": difficulty, "ruleset": ruleset}
    pool = list(range(len(rows)))
    cave = [[_take_card(rows, pool, name) for name in passage] for passage in passages]
    while len(cave) < rules.passages:
        cave.append([])
    sleeve_ids = [cave[p][i] for p, i in (sleeved or [])]
    state = State(rules, config, cave, sleeve_ids, lead)
    state.record["scenario"] = True
    state.log.clear()

    basic_pool = [t for seat in state.seats for t in seat.tools]
    basic_pool += [t for t in state.ids.basic if t not in basic_pool]
    for seat in state.seats:
        state.supply.extend(seat.torches + seat.stash)
        seat.torches, seat.stash, seat.tools = [], [], []
    state.supply.sort()
    for seat, spec in zip(state.seats, seats, strict=True):
        if spec.tools is None:
            own = starting_tools(rules, n, seat.index)
            names = [f"stone {state.tool_table[t].kind.lower()}" for t in own]
        else:
            names = spec.tools
        seat.tools = [_take_tool(state, seat.index, name, basic_pool) for name in names]
        seat.active = set(seat.tools)
        seat.torches = state.supply[: spec.torches]
        del state.supply[: spec.torches]
        seat.stash = state.supply[: spec.stash]
        del state.supply[: spec.stash]
        seat.items = sorted(_take_item(state, pool, kind) for kind in spec.items)
        seat.unsecured = [_take_card(rows, pool, name) for name in spec.unsecured]
        seat.secured = [_take_card(rows, pool, name) for name in spec.secured]
        seat.completed = list(spec.completed)
    state.box.extend(pool)
    for p in known or []:
        state.make_known(cave[p][-1])
        state.tiles.add(p)
    state.hearts = hearts
    if base_phase:
        state.lead = lead
        state.round = 1
        start_round(state)
        state.pending.clear()
    state.card_places()
    assert base_phase or state.phase != BASE
    return state


def parse_action(text: str) -> Action:
    """'MOVE 2', 'COMMIT 98', 'GIVE GOLD 1', 'EXPLORE' -> Action (for readable tests)."""
    kind, *args = text.split()
    names = ACTION_ARGS[kind]
    if len(args) != len(names):
        raise ValueError(f"{kind} takes {names}, got {args}")
    values: dict[str, Any] = {}
    for name, raw in zip(names, args, strict=True):
        values[name] = int(raw) if name in INT_ARGS else raw
    return Action.from_dict({"kind": kind, **values})


def play(state: State, *moves: str) -> list[dict[str, Any]]:
    """Apply actions written as text, in order; returns all their events."""
    events: list[dict[str, Any]] = []
    for move in moves:
        events.extend(state.apply(parse_action(move)))
    return events
