"""The 120 cards of the box: ids, and the per-game card table.

Ids (documented in docs/engine-api.md): 0-49 cave cards in the order of the
rules §8 table; then torch cards; then basic equipment (colour c at a block of
four: two swords, two pickaxes); then exchange cards in recipe order; then
objective cards, inventory cards, the base and the decision card.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from .ruleset import ITEM_KINDS, PICKAXE, SWORD, CaveRow, Ruleset
from .shapes import Card


@dataclass(frozen=True)
class CardIds:
    """Where each kind of card sits in the id space of one ruleset."""

    cave: range
    torches: range
    basic: range
    exchange: range
    objectives: range
    inventories: range
    base: int
    decision: int


@cache
def card_ids(rules: Ruleset) -> CardIds:
    n_cave = sum(row.count for row in rules.cave)
    n_basic = len(rules.colour_tools) * len(rules.colours)
    n_exchange = sum(r.count for r in rules.recipes)
    sizes = (n_cave, rules.torch_cards, n_basic, n_exchange, len(ITEM_KINDS), rules.inventory_cards)
    start = 0
    spans = []
    for size in sizes:
        spans.append(range(start, start + size))
        start += size
    cave, torches, basic, exchange, objectives, inventories = spans
    ids = CardIds(
        cave, torches, basic, exchange, objectives, inventories, base=start, decision=start + 1
    )
    if ids.decision + 1 != rules.box_cards:
        raise ValueError(f"ruleset {rules.id} does not add up to {rules.box_cards} cards")
    return ids


@cache
def cave_rows_by_id(rules: Ruleset) -> tuple[CaveRow, ...]:
    """Cave card id -> its §8 row (rows expanded by count, in table order)."""
    return tuple(row for row in rules.cave for _ in range(row.count))


@dataclass(frozen=True)
class ToolCard:
    id: int
    kind: str
    name: str
    strength: int


@cache
def tool_cards(rules: Ruleset) -> dict[int, ToolCard]:
    """Every tool card (basic and exchange) by id (shared between games: do not modify)."""
    ids = card_ids(rules)
    tools: dict[int, ToolCard] = {}
    per_colour = len(rules.colour_tools)
    for c, colour in enumerate(rules.colours):
        base = ids.basic.start + per_colour * c
        for k, kind in enumerate(rules.colour_tools):
            name = f"{colour.title()} Stone {kind.title()}"
            tools[base + k] = ToolCard(base + k, kind, name, rules.basic_strength)
    next_id = ids.exchange.start
    for recipe in rules.recipes:
        for _ in range(recipe.count):
            name = recipe.name.replace("_", " ").title()
            tools[next_id] = ToolCard(next_id, recipe.tool, name, recipe.strength)
            next_id += 1
    return tools


def exchange_stacks(rules: Ruleset) -> dict[str, list[int]]:
    """Recipe name -> the exchange card ids of that kind, lowest first (a fresh copy)."""
    return {name: list(ids) for name, ids in _exchange_ids(rules).items()}


@cache
def _exchange_ids(rules: Ruleset) -> dict[str, tuple[int, ...]]:
    stacks: dict[str, tuple[int, ...]] = {}
    next_id = card_ids(rules).exchange.start
    for recipe in rules.recipes:
        stacks[recipe.name] = tuple(range(next_id, next_id + recipe.count))
        next_id += recipe.count
    return stacks


def starting_tools(rules: Ruleset, num_seats: int, seat_index: int) -> list[int]:
    """Rules §2.1: a seat's basic equipment, its swords then its pickaxes (a fresh list).

    Seat i draws from colour i, then (when one colour is not enough, as at 2
    seats) colour i + n, and so on: at 2 seats seat i also takes colour i+2's.
    """
    return list(_starting_tools(rules, num_seats, seat_index))


@cache
def _starting_tools(rules: Ruleset, num_seats: int, seat_index: int) -> tuple[int, ...]:
    swords, pickaxes = rules.basic_tools[num_seats]
    colours = [seat_index + k * num_seats for k in range(rules.colours_per_seat(num_seats))]
    table = tool_cards(rules)
    first = card_ids(rules).basic.start
    per_colour = len(rules.colour_tools)
    own = [first + per_colour * c + k for c in colours for k in range(per_colour)]
    own_swords = [t for t in own if table[t].kind == SWORD]
    own_picks = [t for t in own if table[t].kind == PICKAXE]
    return tuple(own_swords[:swords] + own_picks[:pickaxes])


@cache
def plain_card_dicts(rules: Ruleset) -> tuple[Card, ...]:
    """Every cave card's face without a sleeve, by id: what a game copies its own from."""
    return tuple(
        {
            "id": cid,
            "material": row.material,
            "name": row.name,
            "tool": row.tool,
            "strength": row.strength,
            "damage": row.damage,
            "loot": row.loot,
            "torches": row.torches,
            "enchanted": False,
        }
        for cid, row in enumerate(cave_rows_by_id(rules))
    )
