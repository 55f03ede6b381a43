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
from .cards import (
    TOTAL_CARDS,
    CaveRow,
    card_ids,
    cave_rows_by_id,
    exchange_stacks,
    starting_tools,
    tool_cards,
)
from .errors import GameOver, IllegalAction
from .legal import default_action, legal_actions, why_illegal
from .ranking import build_result
from .ruleset import ITEM_KINDS, NONE, TORCH, Ruleset

ENGINE_VERSION = "digdown-engine/0.1.0"
RECORD_FORMAT = "digdown-record/1"

BASE, DECIDE, POSITION, RESOLVE, OVER = "BASE", "DECIDE", "POSITION", "RESOLVE", "OVER"
AT_BASE = -1


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


class State:
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

    def top(self, p: int) -> int | None:
        passage = self.passages[p]
        return passage[-1] if passage else None

    def top_known(self, p: int) -> bool:
        passage = self.passages[p]
        return bool(passage) and passage[-1] in self.known

    def item_kind(self, cid: int) -> str:
        return self.rows[cid].loot

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

    def _base_refill(self) -> None:
        """Rules §4.1, automatic part: hearts, tools, secured loot into inventories."""
        self.hearts = self.rules.hearts
        for seat in self.seats:
            seat.active = set(seat.tools)
        self._emit("BASE_REFILL", hearts=self.hearts)
        for seat_index in self._from(self.round_starter):
            seat = self.seats[seat_index]
            if not seat.secured:
                continue
            moved = [self.card_dicts[c] for c in seat.secured]
            for cid in seat.secured:
                row = self.rows[cid]
                if row.loot in ITEM_KINDS:
                    insort(seat.items, cid)
                    continue
                self.box.append(cid)
                if row.loot == TORCH:
                    self._take_torches(seat, row.torches)
            seat.secured = []
            self._emit("LOOT_TO_INVENTORY", seat=seat_index, cards=moved)

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

    def _end_base_phase(self) -> None:
        self._eliminations += 1
        for seat_index in self._from(self.round_starter):
            seat = self.seats[seat_index]
            if not seat.torches and not seat.stash:
                self._eliminate(seat, "no torch in inventory or stash", self._eliminations)
        if self._check_last_standing():
            return
        if self.seats[self.lead].eliminated:
            self.lead = self._next_alive_after(self.lead)
            self.round_starter = self.lead
        self._start_turn()

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

    # ----------------------------------------------------------- base phase

    def _after_base_action(self, seat: Seat) -> None:
        seat.base_actions += 1

    def _do_exchange(self, seat: Seat, action: Action) -> None:
        recipe = next(r for r in self.rules.recipes if r.name == action.recipe)
        paid = []
        for kind, count in recipe.cost:
            for cid in self.items_of(seat, kind)[:count]:
                seat.items.remove(cid)
                self.box.append(cid)
                paid.append(self.card_dicts[cid])
        tool = self.exchange[recipe.name].pop(0)
        seat.tools.append(tool)
        seat.active.add(tool)
        self._emit("EXCHANGE", seat=seat.index, recipe=recipe.name, tool_id=tool, cards=paid)
        self._after_base_action(seat)

    def _do_trade(self, seat: Seat, action: Action) -> None:
        cid = self.items_of(seat, action.item)[0]
        seat.items.remove(cid)
        self.box.append(cid)
        got = self._take_torches(seat, self.rules.trade[action.item])
        self._emit("TRADE", seat=seat.index, item=action.item, amount=got)
        self._after_base_action(seat)

    def _do_give(self, seat: Seat, action: Action) -> None:
        cid = self.items_of(seat, action.item)[0]
        seat.items.remove(cid)
        insort(self.seats[action.to_seat].items, cid)
        self._emit("GIVE", seat=seat.index, to_seat=action.to_seat, item=action.item)
        self._after_base_action(seat)

    def _do_stash(self, seat: Seat, action: Action) -> None:
        insort(seat.stash, seat.torches.pop(0))
        self._emit("STASH", seat=seat.index)
        self._after_base_action(seat)

    def _do_unstash(self, seat: Seat, action: Action) -> None:
        insort(seat.torches, seat.stash.pop(0))
        self._emit("UNSTASH", seat=seat.index)
        self._after_base_action(seat)

    def _do_discard(self, seat: Seat, action: Action) -> None:
        if action.item == TORCH:
            cid = seat.torches.pop(0)
        else:
            cid = self.items_of(seat, action.item)[0]
            seat.items.remove(cid)
        self.box.append(cid)
        self._emit("DISCARD", seat=seat.index, item=action.item)
        self._after_base_action(seat)

    def _do_done(self, seat: Seat, action: Action) -> None:
        self._emit("DONE", seat=seat.index)
        self.idx += 1
        if self.idx >= len(self.order):
            self._end_base_phase()

    # ------------------------------------------------------ decide step (a)

    def _do_explore(self, seat: Seat, action: Action) -> None:
        self._emit("EXPLORE", seat=seat.index)
        self._after_decision()

    def _do_continue(self, seat: Seat, action: Action) -> None:
        self._emit("CONTINUE", seat=seat.index)
        self._after_decision()

    def _after_decision(self) -> None:
        self.idx += 1
        if self.idx < len(self.order):
            return
        self._pay_torches(self.seats[self.lead], self.rules.explore_cost)
        self.phase = POSITION
        self.order = self._from(self.lead)
        self.idx = 0

    def _do_return(self, seat: Seat, action: Action) -> None:
        """Rules §4.2a: the caller pays; with too few torches its own loot is lost."""
        cost = self.rules.return_cost
        paid_in_full = len(seat.torches) >= cost
        paid = self._pay_torches(seat, cost)
        self._emit("RETURN", seat=seat.index, amount=paid)
        if not paid_in_full:
            self._lose_loot(seat)
        for other in self._from(seat.index):
            self._secure_loot(self.seats[other])
        self._end_round()

    def _lose_loot(self, seat: Seat) -> None:
        if seat.unsecured:
            self._emit(
                "LOOT_LOST", seat=seat.index, cards=[self.card_dicts[c] for c in seat.unsecured]
            )
            self.box.extend(seat.unsecured)
            seat.unsecured = []

    def _secure_loot(self, seat: Seat) -> None:
        if seat.unsecured:
            self._emit(
                "LOOT_SECURED",
                seat=seat.index,
                cards=[self.card_dicts[c] for c in seat.unsecured],
            )
            seat.secured.extend(seat.unsecured)
            seat.unsecured = []

    # ---------------------------------------------------- position step (b)

    def _do_move(self, seat: Seat, action: Action) -> None:
        seat.position = action.passage
        seat.moves += 1
        self._emit("MOVE", seat=seat.index, passage=action.passage)

    def _do_peek(self, seat: Seat, action: Action) -> None:
        p = seat.position
        self._pay_torches(seat, self.rules.peek_cost)
        self.tiles.add(p)
        top = self.passages[p][-1]
        self.make_known(top)
        seat.moves += 1
        self._emit("PEEK", seat=seat.index, passage=p, card=self.card_dicts[top])

    def _do_ready(self, seat: Seat, action: Action) -> None:
        seat.ready = True
        self._emit("READY", seat=seat.index, passage=seat.position)
        self.idx += 1
        if self.idx >= len(self.order):
            self._start_resolve()

    # ------------------------------------------------- reveal and resolve (c)

    def _start_resolve(self) -> None:
        self.phase = RESOLVE
        self.to_resolve = [
            p
            for p in range(self.rules.passages)
            if self.passages[p] and any(self.seats[s].position == p for s in self.order)
        ]
        self._next_passage()

    def _seats_at(self, p: int) -> list[int]:
        return [s for s in self._from(self.lead) if self.seats[s].position == p]

    def _next_passage(self) -> None:
        while self.to_resolve:
            p = self.to_resolve.pop(0)
            at = self._seats_at(p)
            if not at or not self.passages[p]:
                continue
            card = self.passages[p][-1]
            self.make_known(card)
            self.res_passage = p
            self.res_owner = at[0]
            self.res_helpers = at[1:]
            self.attempting = False
            self.committers = []
            self.cidx = 0
            self.committed = 0
            self._emit("REVEAL", passage=p, seat=self.res_owner, card=self.card_dicts[card])
            return
        self.res_passage = -1
        self._end_turn()

    def _res_card(self) -> int:
        return self.passages[self.res_passage][-1]

    def _do_attempt(self, seat: Seat, action: Action) -> None:
        self.attempting = True
        self.committers = [self.res_owner, *self.res_helpers]
        self.cidx = 0
        self.committed = 0
        self._emit("ATTEMPT", seat=seat.index, passage=self.res_passage)

    def _do_leave(self, seat: Seat, action: Action) -> None:
        self._emit("LEAVE", seat=seat.index, passage=self.res_passage)
        self._unresolved()

    def _do_commit(self, seat: Seat, action: Action) -> None:
        tool = action.tool_id
        seat.active.discard(tool)
        self.committed += self.tool_table[tool].strength
        self._emit("COMMIT", seat=seat.index, tool_id=tool, amount=self.committed)
        if self.committed >= self.strength[self._res_card()]:
            self._resolved()

    def _do_stop(self, seat: Seat, action: Action) -> None:
        self._emit("STOP", seat=seat.index)
        self.cidx += 1
        if self.cidx >= len(self.committers):
            self._unresolved()

    def _resolved(self) -> None:
        p = self.res_passage
        card = self.passages[p].pop()
        self.known.discard(card)
        self.tiles.discard(p)
        owner = self.seats[self.res_owner]
        owner.unsecured.append(card)
        self.attempting = False
        self._emit("RESOLVED", seat=owner.index, passage=p, card=self.card_dicts[card])
        loot = self.rows[card].loot
        if loot in self.objectives and loot not in owner.completed:
            owner.completed.append(loot)
            self._emit("OBJECTIVE", seat=owner.index, objective=loot)
            if len(owner.completed) == len(self.objectives):
                self._end("won", owner.index)
                return
        if not any(self.passages):
            self._end("cave_exhausted")
            return
        self._next_passage()

    def _unresolved(self) -> None:
        card = self._res_card()
        self.attempting = False
        self._emit("UNRESOLVED", passage=self.res_passage, card=self.card_dicts[card])
        damage = self.damage[card]
        if damage:
            self.hearts = max(0, self.hearts - damage)
            self._emit("DAMAGE", amount=damage, hearts=self.hearts)
            if self.hearts == 0:
                self._respawn()
                return
        self._next_passage()

    def _respawn(self) -> None:
        """Rules §4.2c.5: everyone respawns, no torches paid, unsecured loot is lost."""
        self._emit("RESPAWN", round=self.round)
        for seat_index in self._from(self.lead):
            self._lose_loot(self.seats[seat_index])
        self.to_resolve = []
        self.res_passage = -1
        self._end_round()

    # -------------------------------------------------------------- forfeit

    def _forfeit(self, seat: Seat, reason: str) -> None:
        """Rules §6: the seat is eliminated at once; the decision in progress carries on."""
        self._eliminations += 1
        seat.forfeited = True
        self._emit("FORFEIT", seat=seat.index, reason=reason)
        self._eliminate(seat, reason, self._eliminations)
        if self._check_last_standing():
            return
        i = seat.index
        if self.phase == RESOLVE:
            self._forfeit_in_resolve(i)
            return
        if i not in self.order:
            return
        pos = self.order.index(i)
        self.order.remove(i)
        if self.phase == DECIDE and i == self.lead:
            # The lead is gone before the turn was paid for: the decide step restarts
            # with the next seat as lead.
            self.lead = self._next_alive_after(i)
            self.order = self._from(self.lead)
            self.idx = 0
            return
        if pos < self.idx:
            self.idx -= 1
        if self.idx < len(self.order):
            return
        if self.phase == BASE:
            self._end_base_phase()
        elif self.phase == DECIDE:
            self.idx = len(self.order) - 1
            self._after_decision()
        elif self.phase == POSITION:
            self._start_resolve()

    def _forfeit_in_resolve(self, i: int) -> None:
        if i in self.res_helpers:
            self.res_helpers.remove(i)
        if i == self.res_owner:
            if not self.res_helpers:
                # Nobody is left at this passage: the card stays, untouched.
                self.attempting = False
                self._next_passage()
                return
            self.res_owner = self.res_helpers.pop(0)
        if not self.attempting or i not in self.committers:
            return
        pos = self.committers.index(i)
        self.committers.remove(i)
        if pos < self.cidx:
            self.cidx -= 1
        if self.cidx >= len(self.committers):
            self._unresolved()

    # ------------------------------------------------------------- checking

    def card_places(self) -> dict[int, str]:
        """Where every one of the 120 cards is. Raises if a card is in two places or none."""
        places: dict[int, str] = {}

        def put(cards: list[int] | set[int] | range, where: str) -> None:
            for c in cards:
                if c in places:
                    raise AssertionError(f"card {c} is both in {places[c]} and {where}")
                places[c] = where

        for p, passage in enumerate(self.passages):
            put(passage, f"passage {p}")
        for seat in self.seats:
            s = seat.index
            put(seat.torches, f"seat {s} inventory")
            put(seat.items, f"seat {s} inventory")
            put(seat.stash, f"seat {s} stash")
            put(seat.tools, f"seat {s} tools")
            put(seat.unsecured, f"seat {s} unsecured loot")
            put(seat.secured, f"seat {s} secured loot")
        put(self.supply, "supply")
        for stack in self.exchange.values():
            put(stack, "exchange stack")
        put(self.box, "box")
        ids = self.ids
        put([t for t in ids.basic if t not in places], "out of play")
        put(ids.objectives, "table")
        put(ids.inventories, "table")
        put([ids.base, ids.decision], "table")
        missing = set(range(TOTAL_CARDS)) - set(places)
        if missing:
            raise AssertionError(f"cards nowhere: {sorted(missing)}")
        return places


def items_of_kind(state: State, seat: Seat) -> dict[str, int]:
    counts = dict.fromkeys(ITEM_KINDS, 0)
    for cid in seat.items:
        counts[state.rows[cid].loot] += 1
    return counts


__all__ = ["ENGINE_VERSION", "NONE", "RECORD_FORMAT", "Seat", "State", "items_of_kind"]
