"""What lies on the table during a game: every card, seat and counter, and no rules.

`Table` is the data of a game in progress. The rules are plain functions over
it, one module per part of the rules (`base_phase`, `exploration`,
`forfeits`, `rounds`, ...); `State` (state.py) is the Table with the
OpenSpiel-style methods that call them. Keeping the data apart means every
rules module imports this one and nothing imports back.
"""

from __future__ import annotations

import copy
from typing import Any

from .cards import (
    card_ids,
    cave_rows_by_id,
    exchange_stacks,
    plain_card_dicts,
    starting_tools,
    tool_cards,
)
from .phases import AT_BASE, DECIDE, RESOLVE
from .ruleset import ITEM_KINDS, Ruleset
from .shapes import Card, Config, Event, Passage, Record, Result, UnseenCount
from .versions import ENGINE_VERSION, RECORD_FORMAT


class Seat:
    """Everything one seat holds. Card lists hold card ids, kept sorted where ids pick cards."""

    __slots__ = (
        "active",
        "base_actions",
        "capacity",
        "colour",
        "completed",
        "eliminated",
        "elimination",
        "faults",
        "forfeited",
        "index",
        "items",
        "moves",
        "position",
        "ready",
        "reason",
        "secured",
        "stash",
        "tools",
        "torches",
        "unsecured",
    )

    def __init__(self, index: int, colour: str, capacity: int) -> None:
        self.index = index
        self.colour = colour
        self.capacity = capacity
        self.torches: list[int] = []  # torch card ids in inventory, sorted
        self.items: list[int] = []  # item cards (cave card ids) in inventory, sorted
        self.stash: list[int] = []  # torch card ids, sorted
        self.tools: list[int] = []  # tool card ids in the order received
        self.active: set[int] = set()
        self.position = AT_BASE
        self.unsecured: list[int] = []  # cave card ids, in the order resolved
        self.secured: list[int] = []
        self.completed: list[str] = []
        self.eliminated = False
        self.elimination = -1  # when (a counter; equal for seats eliminated together)
        self.forfeited = False
        self.reason = ""
        self.faults = 0
        self.base_actions = 0
        self.moves = 0
        self.ready = False

    @property
    def inventory_size(self) -> int:
        return len(self.torches) + len(self.items)

    def __deepcopy__(self, memo: dict[int, Any]) -> Seat:
        other = Seat(self.index, self.colour, self.capacity)
        memo[id(self)] = other
        _copy_attributes(self, other, memo)
        return other


# Set once per game from the ruleset and never changed: copies of a table share them.
_SHARED = frozenset({"rules", "ids", "rows", "tool_table", "card_dicts", "objectives", "sleeved"})


def _attributes(obj: object) -> list[str]:
    """The instance attributes of `obj` in either build (compiled classes have no __dict__)."""
    names: list[str] = []
    for cls in type(obj).__mro__:
        names.extend(getattr(cls, "__mypyc_attrs__", ()))
        names.extend(getattr(cls, "__slots__", ()))
    names.extend(getattr(obj, "__dict__", ()))
    return [n for n in dict.fromkeys(names) if n not in ("__dict__", "__weakref__")]


def _copy_attributes(source: object, target: object, memo: dict[int, Any]) -> None:
    for name in _attributes(source):
        value = getattr(source, name)
        setattr(target, name, value if name in _SHARED else copy.deepcopy(value, memo))


class Table:
    """A game's data: the dealt cave, every seat, the step in progress, the log and record."""

    def __init__(
        self,
        rules: Ruleset,
        config: Config,
        cave: list[list[int]],
        sleeved: list[int],
        first_lead: int,
    ) -> None:
        n: int = config["num_seats"]
        self.rules = rules
        self.config = config.copy()
        self.ids = card_ids(rules)
        self.rows = cave_rows_by_id(rules)
        self.tool_table = tool_cards(rules)
        self.objectives: tuple[str, ...] = rules.objectives[config["difficulty"]]
        self.sleeved = frozenset(sleeved)
        # Every card's face (events and observations show these very dicts), and the
        # strength and damage it plays with: the plain faces copied, the sleeved ones raised.
        self.card_dicts: list[Card] = [face.copy() for face in plain_card_dicts(rules)]
        self.strength = [row.strength for row in self.rows]
        self.damage = [row.damage for row in self.rows]
        for cid in self.sleeved:
            if 0 <= cid < len(self.rows):
                self.strength[cid] += rules.sleeve_strength
                self.damage[cid] += rules.sleeve_damage
                face = self.card_dicts[cid]
                face["strength"] = self.strength[cid]
                face["damage"] = self.damage[cid]
                face["enchanted"] = True

        self.passages: list[list[int]] = [list(p) for p in cave]  # bottom -> top
        # Passages only ever lose their top card, so what their backs show is a prefix
        # of the dealt passage; and the faces still face down only shrink.
        self.dealt_backs = [[self.rows[c].material for c in p] for p in cave]
        self.dealt_sleeves = [[c in self.sleeved for c in p] for p in cave]
        # Face -> how many dealt cards show it face down (a plain dict: Counter's methods
        # are Python code the compiled build would call into).
        self.unseen: dict[tuple[str, str], int] = {}
        for p in cave:
            for c in p:
                row = self.rows[c]
                shown = (row.material, row.name)
                self.unseen[shown] = self.unseen.get(shown, 0) + 1
        self.known: set[int] = set()
        # What the last observation showed of each passage, and of the unseen counts
        # (observation.py): reused while unchanged, so an observation costs what changed.
        self.passage_views: list[tuple[tuple[int, bool, int], Passage] | None] = [
            None for _ in cave
        ]
        self.unseen_view: list[UnseenCount] | None = None
        # The same for the training vector (features.py), as its float32 pieces.
        self.passage_vectors: list[tuple[tuple[int, bool, int], bytes] | None] = [
            None for _ in cave
        ]
        self.unseen_vector: bytes | None = None
        self.tiles: set[int] = set()  # passages with a torch tile in front
        self.hearts = rules.hearts
        self.exchange = exchange_stacks(rules)
        self.box: list[int] = []
        self.supply: list[int] = list(self.ids.torches)
        self.seats = [Seat(i, rules.colours[i], rules.capacity[n]) for i in range(n)]
        self._deal_equipment(n)

        self.phase = DECIDE
        self.round = 0
        self.turn = 0
        self.lead = first_lead
        self.round_starter = first_lead
        self.order: list[int] = []  # seats in turn order for BASE / DECIDE / POSITION
        self.idx = 0
        # resolve step
        self.to_resolve: list[int] = []
        self.res_passage = -1
        self.res_owner = -1
        self.res_helpers: list[int] = []
        self.attempting = False
        self.committers: list[int] = []
        self.cidx = 0
        self.committed = 0
        # end
        self.is_over = False
        self.end_reason = ""
        self.winner = -1
        self.eliminations = 0  # a clock of eliminations: seats eliminated together share it
        self.result: Result | None = None  # set once, when the game ends

        self.log: list[Event] = []
        # Events of the entry being applied (State hands them out and logs them). The rules
        # append each as a literal dict, its fields then "kind": one dict built, not two.
        self.pending: list[Event] = []
        self.record: Record = {
            "format": RECORD_FORMAT,
            "ruleset": rules.id,
            "engine_version": ENGINE_VERSION,
            "config": config.copy(),
            "cave": [list(p) for p in cave],
            "sleeved": sorted(sleeved),
            "first_lead": first_lead,
            "entries": [],
        }

    def __deepcopy__(self, memo: dict[int, Any]) -> Table:
        """A copy to explore from (the compiled build cannot copy an object field by field
        on its own: a new one comes from the same setup, then takes every field's copy)."""
        r = self.record
        other = type(self)(self.rules, self.config, r["cave"], r["sleeved"], r["first_lead"])
        memo[id(self)] = other
        _copy_attributes(self, other, memo)
        return other

    def _deal_equipment(self, n: int) -> None:
        """Rules §2.1-2.2: tools by colour, starting torches from the lowest ids."""
        rules = self.rules
        for seat in self.seats:
            seat.tools = starting_tools(rules, n, seat.index)
            seat.active = set(seat.tools)
        inv, stash = rules.start_torches[n]
        for seat in self.seats:
            seat.torches = self.supply[:inv]
            seat.stash = self.supply[inv : inv + stash]
            del self.supply[: inv + stash]

    # ------------------------------------------------------------- queries

    @property
    def acting_seat(self) -> int:
        """The one seat that decides now, or -1 once the game is over."""
        if self.is_over:
            return -1
        if self.phase == RESOLVE:
            return self.committers[self.cidx] if self.attempting else self.res_owner
        return self.order[self.idx]

    def alive(self) -> list[int]:
        return [s.index for s in self.seats if not s.eliminated]

    def seats_from(self, first: int) -> list[int]:
        """Non-eliminated seats in seat order starting from `first` ("turn order")."""
        seats = self.seats
        n = len(seats)
        order = []
        for k in range(n):
            s = (first + k) % n
            if not seats[s].eliminated:
                order.append(s)
        return order

    def next_alive_after(self, seat_index: int) -> int:
        n = len(self.seats)
        for step in range(1, n + 1):
            candidate = (seat_index + step) % n
            if not self.seats[candidate].eliminated:
                return candidate
        return seat_index

    def top_known(self, p: int) -> bool:
        passage = self.passages[p]
        return bool(passage) and passage[-1] in self.known

    def items_of(self, seat: Seat, kind: str) -> list[int]:
        """The seat's inventory item cards of one kind, lowest id first."""
        return [c for c in seat.items if self.rows[c].loot == kind]

    def item_counts(self, seat: Seat) -> dict[str, int]:
        """Items in inventory by kind, every kind of ITEM_KINDS present (0 when none)."""
        counts = {kind: 0 for kind in ITEM_KINDS}  # not dict.fromkeys: a Python-level call
        for cid in seat.items:
            counts[self.rows[cid].loot] += 1
        return counts

    # ------------------------------------------------------------- changes

    def make_known(self, card: int) -> None:
        """A face-down card's face becomes public (peeked or revealed)."""
        if card not in self.known:
            self.known.add(card)
            row = self.rows[card]
            self.unseen[(row.material, row.name)] -= 1
            self.unseen_view = None
            self.unseen_vector = None
