"""Rules §4.1, the base phase: what a seat does at home between rounds.

A mixin of `State` (state.py): the methods use the state's fields directly.
"""

from __future__ import annotations

from bisect import insort
from typing import TYPE_CHECKING

from .actions import Action
from .ruleset import ITEM_KINDS, TORCH

if TYPE_CHECKING:
    from .state import Seat


class BasePhase:
    """Refill, loot into inventories, the base actions, and eliminations at the end."""

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
