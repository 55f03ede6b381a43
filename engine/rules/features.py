"""A seat's observation as a flat vector of numbers, read from the game itself (no dict built).

The training environment's vector (engine/training/encoding.py, where each part
is explained) is defined over the observation dict a bot receives; building that
dict only to read it back costs more than the game step. This module computes
the very same numbers straight from the table, in the compiled build at C speed;
tests/engine/training/test_features.py checks both ways agree on many positions. Seen
from the observer: players rotated so that the observer comes first.

Every number is a whole one (counts, strengths, flags), which float32 holds
exactly, so the vector is produced as float32 pieces (little-endian `bytes`):
shared one-hot parts, cached passage parts and one shared piece per small value,
joined once by the caller into the buffer numpy reads without converting
(`np.frombuffer(bytearray().join(parts), "<f4")`). Converting a list of ints
number by number cost more than computing the numbers.
"""

from __future__ import annotations

import struct
from typing import Final

from .phases import RESOLVE
from .table import Seat, Table

PHASES: Final = ("BASE", "DECIDE", "POSITION", "RESOLVE", "OVER")
TOOLS: Final = ("PICKAXE", "SWORD")
MATERIALS: Final = ("DIRT", "STONE", "DEEPSLATE")
ITEMS: Final = ("IRON", "GOLD", "DIAMOND", "EMERALD")
LOOTS: Final = ("NONE", "TORCH", "IRON", "GOLD", "DIAMOND", "EMERALD")
CARD_SIZE: Final = 2 + len(TOOLS) + len(LOOTS) + 1
FLOAT: Final = "<f"  # the pieces' number format (struct), numpy's "<f4"


def features(state: Table, seat: int) -> list[int]:
    """The observation vector of `seat` (the layout of encoding.ObservationEncoder)."""
    packed = b"".join(feature_parts(state, seat))
    return [int(x) for x in struct.unpack(f"<{len(packed) // 4}f", packed)]


def feature_parts(state: Table, seat: int) -> list[bytes]:
    """`features(state, seat)` as float32 pieces, in order: join them for the vector."""
    out: list[bytes] = []
    rules = state.rules
    n = len(state.seats)
    passages = rules.passages
    out.append(_hot(PHASES.index(state.phase) if state.phase in PHASES else -1, len(PHASES)))
    out.append(_quad(state.hearts, len(state.supply), rules.tiles - len(state.tiles), state.round))
    out.append(_num(state.turn))
    objectives = state.objectives
    flags = 0
    for i in range(len(ITEMS)):
        if ITEMS[i] in objectives:
            flags |= 1 << i
    out.append(_FLAGS[flags])
    for recipe in rules.recipes:
        stack = state.exchange.get(recipe.name)
        out.append(_num(len(stack) if stack is not None else 0))
    out.append(_hot((state.lead - seat) % n, n))
    acting = state.acting_seat
    out.append(_hot((acting - seat) % n if acting >= 0 else -1, n))
    tools = _tools_of(state)
    for k in range(n):
        _player(out, state.seats[(seat + k) % n], tools, passages)
    for p in range(passages):
        out.append(_passage(state, p))
    out.append(_unseen(state))
    resolving = state.phase == RESOLVE and state.res_passage >= 0 and not state.is_over
    if resolving:
        out.append(_SMALL[1])
        out.append(_hot(state.res_passage, passages))
        out.append(_card(state, state.passages[state.res_passage][-1]))
        out.append(_num(state.committed))
        out.append(_SMALL[1 if state.attempting else 0])
        out.append(_SMALL[1 if state.res_owner == seat else 0])
        committer = state.committers[state.cidx] if state.attempting else -1
        out.append(_SMALL[1 if committer == seat else 0])
    else:
        out.append(_SMALL[0])
        out.append(_hot(-1, passages))
        out.append(_NO_CARD)
        out.append(_ZEROS4)
    return out


def pack(values: list[int]) -> bytes:
    """Numbers as one float32 piece (the pieces' format)."""
    return struct.pack(f"<{len(values)}f", *values)


def _num(value: int) -> bytes:
    if 0 <= value < 256:
        return _SMALL[value]
    return struct.pack(FLOAT, value)


# Shared read-only pieces: every small value, one-hot parts _HOT[size][index + 1] (index -1:
# all zeros), the 16 patterns of four flags.
_SMALL: Final = [struct.pack(FLOAT, i) for i in range(256)]
_HOT: Final = [
    [pack([1 if i == index else 0 for i in range(size)]) for index in range(-1, size)]
    for size in range(17)
]
_FLAGS: Final = [pack([(bits >> i) & 1 for i in range(4)]) for bits in range(16)]
_NO_CARD: Final = pack([0] * CARD_SIZE)
_ZEROS4: Final = pack([0] * 4)
_ITEM_INDEX: Final = {k: i for i, k in enumerate(ITEMS)}
_TOOL_INDEX: Final = {k: i for i, k in enumerate(TOOLS)}


# Runs of three and four numbers below 16 (nearly all of them) as one shared piece each,
# made on first use: fewer pieces to list and join than one per number.
_QUADS: Final[list[bytes | None]] = [None] * (1 << 16)
_TRIPLES: Final[list[bytes | None]] = [None] * (1 << 12)


def _quad(a: int, b: int, c: int, d: int) -> bytes:
    if 0 <= a < 16 and 0 <= b < 16 and 0 <= c < 16 and 0 <= d < 16:
        key = ((a * 16 + b) * 16 + c) * 16 + d
        found = _QUADS[key]
        if found is None:
            found = _QUADS[key] = pack([a, b, c, d])
        return found
    return pack([a, b, c, d])


def _triple(a: int, b: int, c: int) -> bytes:
    if 0 <= a < 16 and 0 <= b < 16 and 0 <= c < 16:
        key = (a * 16 + b) * 16 + c
        found = _TRIPLES[key]
        if found is None:
            found = _TRIPLES[key] = pack([a, b, c])
        return found
    return pack([a, b, c])


def _hot(index: int, size: int) -> bytes:
    if size < len(_HOT) and -1 <= index < size:
        return _HOT[size][index + 1]
    return pack([1 if i == index else 0 for i in range(size)])


def _player(out: list[bytes], s: Seat, tools: _Tools, passages: int) -> None:
    iron = gold = diamond = emerald = 0
    item_of = tools.item_of
    for c in s.items:
        i = item_of[c]
        if i == 0:
            iron += 1
        elif i == 1:
            gold += 1
        elif i == 2:
            diamond += 1
        elif i == 3:
            emerald += 1
    out.append(_quad(len(s.torches), len(s.stash), s.capacity, iron))
    out.append(_triple(gold, diamond, emerald))
    out.append(_hot(s.position + 1, passages + 1))
    pick_active = pick_all = sword_active = sword_all = 0
    kind_of, strength_of = tools.kind_of, tools.strength_of
    active = s.active
    for t in s.tools:
        k = kind_of[t]
        if k == 0:
            pick_all += strength_of[t]
            if t in active:
                pick_active += strength_of[t]
        elif k == 1:
            sword_all += strength_of[t]
            if t in active:
                sword_active += strength_of[t]
    out.append(_quad(pick_active, pick_all, sword_active, sword_all))
    loot = 0
    has_loot = tools.has_loot
    for c in s.unsecured:
        if has_loot[c]:
            loot += 1
    out.append(_triple(len(s.unsecured), len(s.secured), loot))
    completed = s.completed
    flags = 0
    if completed:
        for i in range(len(ITEMS)):
            if ITEMS[i] in completed:
                flags |= 1 << i
    out.append(_FLAGS[flags])
    out.append(_quad(1 if s.eliminated else 0, 1 if s.ready else 0, s.moves, s.faults))


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


def _passage(state: Table, p: int) -> bytes:
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
    v.extend(_hot_values(MATERIALS.index(last) if last in MATERIALS else -1, len(MATERIALS)))
    for m in MATERIALS:
        count = 0
        for i in range(size):
            if backs[i] == m:
                count += 1
        v.append(count)
    v.append(1 if top >= 0 else 0)
    part = pack(v) + _card(state, top)
    state.passage_vectors[p] = (key, part)
    return part


def _unseen(state: Table) -> bytes:
    """The unseen counts in the ruleset's row order; rebuilt only after `make_known`."""
    found = state.unseen_vector
    if found is None:
        unseen = state.unseen
        found = state.unseen_vector = pack(
            [unseen.get((row.material, row.name), 0) for row in state.rules.cave]
        )
    return found


def _hot_values(index: int, size: int) -> list[int]:
    return [1 if i == index else 0 for i in range(size)]


def _card(state: Table, c: int) -> bytes:
    if c < 0:
        return _NO_CARD
    row = state.rows[c]
    v = [state.strength[c], state.damage[c]]
    v.extend(_hot_values(_TOOL_INDEX.get(row.tool, -1), len(TOOLS)))
    v.extend(_hot_values(LOOTS.index(row.loot) if row.loot in LOOTS else -1, len(LOOTS)))
    v.append(row.torches)
    return pack(v)
