"""A seat's observation as a flat list of integers, read from the game itself (no dict built).

The training environment's vector (engine/training/encoding.py, where each part
is explained) is defined over the observation dict a bot receives; building that
dict only to read it back costs more than the game step. This module computes
the very same numbers straight from the table, in the compiled build at C speed;
tests/engine/training/test_features.py checks both ways agree on many positions. Seen
from the observer: players rotated so that the observer comes first. Every number
is a whole one (counts, strengths, flags), so the list holds small ints, which
Python never allocates: the vector costs little more than reading the table.
"""

from __future__ import annotations

from typing import Final

from .phases import RESOLVE
from .table import Seat, Table

PHASES: Final = ("BASE", "DECIDE", "POSITION", "RESOLVE", "OVER")
TOOLS: Final = ("PICKAXE", "SWORD")
MATERIALS: Final = ("DIRT", "STONE", "DEEPSLATE")
ITEMS: Final = ("IRON", "GOLD", "DIAMOND", "EMERALD")
LOOTS: Final = ("NONE", "TORCH", "IRON", "GOLD", "DIAMOND", "EMERALD")
CARD_SIZE: Final = 2 + len(TOOLS) + len(LOOTS) + 1


def features(state: Table, seat: int) -> list[int]:
    """The observation vector of `seat` (the layout of encoding.ObservationEncoder)."""
    rules = state.rules
    n = len(state.seats)
    passages = rules.passages
    v: list[int] = []
    v.extend(_hot(PHASES.index(state.phase) if state.phase in PHASES else -1, len(PHASES)))
    v.append(state.hearts)
    v.append(len(state.supply))
    v.append(rules.tiles - len(state.tiles))
    v.append(state.round)
    v.append(state.turn)
    for obj in ITEMS:
        v.append(1 if obj in state.objectives else 0)
    for recipe in rules.recipes:
        stack = state.exchange.get(recipe.name)
        v.append(len(stack) if stack is not None else 0)
    v.extend(_hot((state.lead - seat) % n, n))
    acting = state.acting_seat
    v.extend(_hot((acting - seat) % n if acting >= 0 else -1, n))
    tools = _tools_of(state)
    for k in range(n):
        _player(v, state, state.seats[(seat + k) % n], tools)
    for p in range(passages):
        v.extend(_passage(state, p))
    v.extend(_unseen(state))
    resolving = state.phase == RESOLVE and state.res_passage >= 0 and not state.is_over
    if resolving:
        v.append(1)
        v.extend(_hot(state.res_passage, passages))
        v.extend(_card(state, state.passages[state.res_passage][-1]))
        v.append(state.committed)
        v.append(1 if state.attempting else 0)
        v.append(1 if state.res_owner == seat else 0)
        committer = state.committers[state.cidx] if state.attempting else -1
        v.append(1 if committer == seat else 0)
    else:
        v.append(0)
        v.extend(_hot(-1, passages))
        v.extend(_NO_CARD)
        v.extend([0, 0, 0, 0])
    return v


# One-hot vectors, shared read-only: _HOT[size][index + 1] (index -1: all zeros).
_HOT: Final[list[list[list[int]]]] = [
    [[1 if i == index else 0 for i in range(size)] for index in range(-1, size)]
    for size in range(17)
]
_NO_CARD: Final = [0] * CARD_SIZE
_ITEM_INDEX: Final = {k: i for i, k in enumerate(ITEMS)}
_TOOL_INDEX: Final = {k: i for i, k in enumerate(TOOLS)}


def _hot(index: int, size: int) -> list[int]:
    if size < len(_HOT) and -1 <= index < size:
        return _HOT[size][index + 1]
    return [1 if i == index else 0 for i in range(size)]


def _player(v: list[int], state: Table, s: Seat, tools: _Tools) -> None:
    v.append(len(s.torches))
    v.append(len(s.stash))
    v.append(s.capacity)
    counts = [0, 0, 0, 0]
    item_of = tools.item_of
    for c in s.items:
        i = item_of[c]
        if i >= 0:
            counts[i] += 1
    v.extend(counts)
    v.extend(_hot(s.position + 1, state.rules.passages + 1))
    strength = [0, 0, 0, 0]  # PICKAXE active, all; SWORD active, all
    kind_of, strength_of = tools.kind_of, tools.strength_of
    active = s.active
    for t in s.tools:
        k = kind_of[t]
        if k >= 0:
            strength[2 * k + 1] += strength_of[t]
            if t in active:
                strength[2 * k] += strength_of[t]
    v.extend(strength)
    v.append(len(s.unsecured))
    v.append(len(s.secured))
    loot = 0
    has_loot = tools.has_loot
    for c in s.unsecured:
        if has_loot[c]:
            loot += 1
    v.append(loot)
    completed = s.completed
    for item in ITEMS:
        v.append(1 if item in completed else 0)
    v.append(1 if s.eliminated else 0)
    v.append(1 if s.ready else 0)
    v.append(s.moves)
    v.append(s.faults)


class _Tools:
    """Per-card lookups of one ruleset, as lists indexed by card id (built once per ruleset)."""

    def __init__(self, state: Table) -> None:
        size = state.rules.box_cards
        self.kind_of = [-1] * size  # tool card id -> index in TOOLS
        self.strength_of = [0] * size
        for t, card in state.tool_table.items():
            self.kind_of[t] = _TOOL_INDEX.get(card.kind, -1)
            self.strength_of[t] = card.strength
        self.item_of = [-1] * size  # cave card id -> index in ITEMS
        self.has_loot = [False] * size
        for c, row in enumerate(state.rows):
            self.item_of[c] = _ITEM_INDEX.get(row.loot, -1)
            self.has_loot[c] = row.loot != "NONE"


_TABLES: Final[dict[int, tuple[object, _Tools]]] = {}  # by ruleset identity (eq=False)


def _tools_of(state: Table) -> _Tools:
    found = _TABLES.get(id(state.rules))
    if found is not None and found[0] is state.rules:
        return found[1]
    if len(_TABLES) > 64:  # rulesets made on the fly (tests): do not keep them all
        _TABLES.clear()
    tools = _Tools(state)
    _TABLES[id(state.rules)] = (state.rules, tools)
    return tools


def _passage(state: Table, p: int) -> list[int]:
    """Passage p's part; the previous one while the passage looks the same (shared)."""
    passage = state.passages[p]
    size = len(passage)
    tile = p in state.tiles
    top = passage[-1] if size and passage[-1] in state.known else -1
    key = (size, tile, top)
    cached = state.passage_vectors[p]
    if cached is not None and cached[0] == key:
        return cached[1]
    v = [size, 1 if tile else 0]
    v.append(1 if size and state.dealt_sleeves[p][size - 1] else 0)
    backs = state.dealt_backs[p]
    last = backs[size - 1] if size else ""
    v.extend(_hot(MATERIALS.index(last) if last in MATERIALS else -1, len(MATERIALS)))
    for m in MATERIALS:
        count = 0
        for i in range(size):
            if backs[i] == m:
                count += 1
        v.append(count)
    v.append(1 if top >= 0 else 0)
    v.extend(_card(state, top))
    state.passage_vectors[p] = (key, v)
    return v


def _unseen(state: Table) -> list[int]:
    """The unseen counts in the ruleset's row order; rebuilt only after `make_known`."""
    found = state.unseen_vector
    if found is None:
        unseen = state.unseen
        found = state.unseen_vector = [
            unseen.get((row.material, row.name), 0) for row in state.rules.cave
        ]
    return found


def _card(state: Table, c: int) -> list[int]:
    if c < 0:
        return _NO_CARD
    row = state.rows[c]
    v = [state.strength[c], state.damage[c]]
    v.extend(_hot(_TOOL_INDEX.get(row.tool, -1), len(TOOLS)))
    v.extend(_hot(LOOTS.index(row.loot) if row.loot in LOOTS else -1, len(LOOTS)))
    v.append(row.torches)
    return v
