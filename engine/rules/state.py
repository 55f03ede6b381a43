"""The game state of Digging Down and its state machine (rules §4-§6).

One `State` is one game in progress. It names the single acting seat, lists
that seat's legal actions, and applies one action at a time, emitting events.
It holds no RNG: the cave is dealt before the state exists (see `setup.py`),
so a state is a pure function of its setup and its recorded entries.
"""

from __future__ import annotations

from bisect import insort
from collections import Counter
from typing import Any

from .actions import Action
from .base_phase import BasePhase
from .cards import (
    CaveRow,
    card_ids,
    cave_rows_by_id,
    exchange_stacks,
    starting_tools,
    tool_cards,
)
from .conservation import card_places
from .errors import GameOver, IllegalAction
from .exploration import Exploration
from .forfeits import Forfeits
from .legal import default_action, legal_actions, why_illegal
from .phases import (
    AT_BASE,
    BASE,
    DECIDE,
    ENGINE_VERSION,
    OVER,
    RECORD_FORMAT,
    RESOLVE,
)
from .ranking import build_result
from .ruleset import ITEM_KINDS, Ruleset


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


class State(BasePhase, Exploration, Forfeits):
    """A game of `dd-1` in progress. Build one with `new_game` or `from_setup`."""

    def __init__(
        self,
        rules: Ruleset,
        config: dict[str, Any],
        cave: list[list[int]],
        sleeved: list[int],
        first_lead: int,
    ) -> None:
        n = config["num_seats"]
        self.rules = rules
        self.config = dict(config)
        self.ids = card_ids(rules)
        self.rows: list[CaveRow] = cave_rows_by_id(rules)
        self.tool_table = tool_cards(rules)
        self.objectives: tuple[str, ...] = rules.objectives[config["difficulty"]]
        self.sleeved = frozenset(sleeved)
        self.strength = [
            row.strength + (rules.sleeve_strength if cid in self.sleeved else 0)
            for cid, row in enumerate(self.rows)
        ]
        self.damage = [
            row.damage + (rules.sleeve_damage if cid in self.sleeved else 0)
            for cid, row in enumerate(self.rows)
        ]
        self.card_dicts = [self._card_dict(cid) for cid in range(len(self.rows))]

        self.passages: list[list[int]] = [list(p) for p in cave]  # bottom -> top
        # Passages only ever lose their top card, so what their backs show is a prefix
        # of the dealt passage; and the faces still face down only shrink.
        self.dealt_backs = [[self.rows[c].material for c in p] for p in cave]
        self.dealt_sleeves = [[c in self.sleeved for c in p] for p in cave]
        self.unseen: Counter[tuple[str, str]] = Counter(
            (self.rows[c].material, self.rows[c].name) for p in cave for c in p
        )
        self.known: set[int] = set()
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
        self._eliminations = 0
        self._result: dict[str, Any] | None = None

        self.log: list[dict[str, Any]] = []
        self._pending: list[dict[str, Any]] = []
        self._legal: list[Action] | None = None
        self.record: dict[str, Any] = {
            "format": RECORD_FORMAT,
            "ruleset": rules.id,
            "engine_version": ENGINE_VERSION,
            "config": dict(config),
            "cave": [list(p) for p in cave],
            "sleeved": sorted(sleeved),
            "first_lead": first_lead,
            "entries": [],
        }
        self._emit("GAME_START", seat=first_lead)
        self._start_round()
        self._flush()

    # ------------------------------------------------------------------ setup

    def _card_dict(self, cid: int) -> dict[str, Any]:
        row = self.rows[cid]
        return {
            "id": cid,
            "material": row.material,
            "name": row.name,
            "tool": row.tool,
            "strength": self.strength[cid],
            "damage": self.damage[cid],
            "loot": row.loot,
            "torches": row.torches,
            "enchanted": cid in self.sleeved,
        }

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

    @property
    def result(self) -> dict[str, Any] | None:
        if not self.is_over:
            return None
        if self._result is None:
            self._result = build_result(self)
        return self._result

    def alive(self) -> list[int]:
        return [s.index for s in self.seats if not s.eliminated]

    def make_known(self, card: int) -> None:
        """A face-down card's face becomes public (peeked or revealed)."""
        if card not in self.known:
            self.known.add(card)
            row = self.rows[card]
            self.unseen[(row.material, row.name)] -= 1

    def top_known(self, p: int) -> bool:
        passage = self.passages[p]
        return bool(passage) and passage[-1] in self.known

    def items_of(self, seat: Seat, kind: str) -> list[int]:
        return [c for c in seat.items if self.rows[c].loot == kind]

    def legal_actions(self) -> list[Action]:
        """The complete list of legal actions of the acting seat (never empty until the end)."""
        if self._legal is None:
            if self.is_over:
                return []
            self._legal = legal_actions(self)
        return self._legal

    def default_action(self) -> Action:
        if self.is_over:
            raise GameOver("the game is over")
        return default_action(self)

    def observation(self, seat: int) -> dict[str, Any]:
        from .observation import observe

        return observe(self, seat)

    # ------------------------------------------------------------- applying

    def apply(self, action: Action) -> list[dict[str, Any]]:
        """Apply a legal action of the acting seat; returns the events it caused."""
        self._check_legal(action)
        self.record["entries"].append(
            {"seat": self.acting_seat, "action": action.to_dict(), "forced": False}
        )
        return self._play(action)

    def apply_forced(self) -> list[dict[str, Any]]:
        """Play the only legal action (rules §6: the engine plays single-choice decisions)."""
        legal = self.legal_actions()
        if self.is_over:
            raise GameOver("the game is over")
        if len(legal) != 1:
            raise IllegalAction(f"the decision has {len(legal)} legal actions, not one")
        self.record["entries"].append(
            {"seat": self.acting_seat, "action": legal[0].to_dict(), "forced": True}
        )
        return self._play(legal[0])

    def apply_default(self, reason: str) -> list[dict[str, Any]]:
        """A fault of the acting seat: count it and play the §6 default; the third forfeits."""
        if self.is_over:
            raise GameOver("the game is over")
        seat_index = self.acting_seat
        seat = self.seats[seat_index]
        self.record["entries"].append({"seat": seat_index, "fault": reason})
        return self._fault(seat, reason)

    def forfeit(self, seat_index: int, reason: str) -> list[dict[str, Any]]:
        """Forfeit a seat at once (rules §6: a dead bot)."""
        if self.is_over:
            raise GameOver("the game is over")
        if not 0 <= seat_index < len(self.seats) or self.seats[seat_index].eliminated:
            raise IllegalAction(f"seat {seat_index} is not in the game")
        self.record["entries"].append({"seat": seat_index, "forfeit": reason})
        self._forfeit(self.seats[seat_index], reason)
        return self._flush()

    def _check_legal(self, action: Action) -> None:
        if self.is_over:
            raise GameOver("the game is over")
        if action not in self.legal_actions():
            raise IllegalAction(why_illegal(self, action))

    def _fault(self, seat: Seat, reason: str) -> list[dict[str, Any]]:
        seat.faults += 1
        self._emit("FAULT", seat=seat.index, reason=reason, amount=seat.faults)
        if seat.faults >= 3:
            self._forfeit(seat, f"third fault: {reason}")
            return self._flush()
        self._legal = None
        return self._play(self.default_action())

    def _play(self, action: Action) -> list[dict[str, Any]]:
        self._legal = None
        handler = getattr(self, "_do_" + action.kind.lower())
        handler(self.seats[self.acting_seat], action)
        return self._flush()

    def _flush(self) -> list[dict[str, Any]]:
        events, self._pending = self._pending, []
        self.log.extend(events)
        self._legal = None
        return events

    def _emit(self, kind: str, **fields: Any) -> None:
        fields["kind"] = kind
        self._pending.append(fields)

    # ----------------------------------------------------------- round flow

    def _next_alive_after(self, seat_index: int) -> int:
        n = len(self.seats)
        for step in range(1, n + 1):
            candidate = (seat_index + step) % n
            if not self.seats[candidate].eliminated:
                return candidate
        return seat_index

    def _from(self, first: int) -> list[int]:
        """Non-eliminated seats in seat order starting from `first`."""
        n = len(self.seats)
        return [(first + k) % n for k in range(n) if not self.seats[(first + k) % n].eliminated]

    def _start_round(self) -> None:
        self.round += 1
        self.round_starter = self.lead
        self._emit("ROUND_START", round=self.round, seat=self.lead)
        if self.round == 1:
            self._start_turn()
            return
        self._base_refill()
        self.phase = BASE
        self.order = self._from(self.round_starter)
        self.idx = 0
        for seat in self.seats:
            seat.base_actions = 0

    def _take_torches(self, seat: Seat, k: int) -> int:
        taken = self.supply[:k]
        del self.supply[:k]
        for t in taken:
            insort(seat.torches, t)
        return len(taken)

    def _pay_torches(self, seat: Seat, k: int) -> int:
        paid = seat.torches[:k]
        del seat.torches[:k]
        for t in paid:
            insort(self.supply, t)
        if paid:
            self._emit("TORCH_PAID", seat=seat.index, amount=len(paid))
        return len(paid)

    def _eliminate(self, seat: Seat, reason: str, when: int) -> None:
        seat.eliminated = True
        seat.elimination = when
        seat.reason = reason
        held = seat.torches + seat.items + seat.stash + seat.tools + seat.unsecured + seat.secured
        self.box.extend(held)
        seat.torches, seat.items, seat.stash, seat.tools = [], [], [], []
        seat.unsecured, seat.secured = [], []
        seat.active = set()
        seat.position = AT_BASE
        self._emit("ELIMINATED", seat=seat.index, reason=reason)

    def _check_last_standing(self) -> bool:
        if len(self.alive()) <= 1:
            self._end("last_standing")
            return True
        return False

    def _end(self, reason: str, winner: int = -1) -> None:
        self.is_over = True
        self.phase = OVER
        self.end_reason = reason
        self.winner = winner
        result = self.result
        assert result is not None
        self._emit("GAME_END", reason=reason, seat=winner, ranks=result["ranks"])

    def _start_turn(self) -> None:
        self.turn += 1
        self.phase = DECIDE
        self.order = self._from(self.lead)
        self.idx = 0
        for seat in self.seats:
            seat.moves = 0
            seat.ready = False
        self._emit("TURN_START", turn=self.turn, seat=self.lead)

    def _end_turn(self) -> None:
        if self.turn >= self.rules.turn_limit:
            self._end("turn_limit")
            return
        self.lead = self._next_alive_after(self.lead)
        self._start_turn()

    def _end_round(self) -> None:
        for seat in self.seats:
            seat.position = AT_BASE
            seat.ready = False
        self.attempting = False
        self._emit("ROUND_END", round=self.round)
        if self.turn >= self.rules.turn_limit:
            self._end("turn_limit")
            return
        self.lead = self._next_alive_after(self.lead)
        self._start_round()

    def card_places(self) -> dict[int, str]:
        """Where every one of the 120 cards is. Raises if a card is in two places or none."""
        return card_places(self)


def items_of_kind(state: State, seat: Seat) -> dict[str, int]:
    counts = dict.fromkeys(ITEM_KINDS, 0)
    for cid in seat.items:
        counts[state.rows[cid].loot] += 1
    return counts


__all__ = ["ENGINE_VERSION", "RECORD_FORMAT", "Seat", "State", "items_of_kind"]
