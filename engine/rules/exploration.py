"""Rules §4.2, an exploration turn: (a) decide, (b) position, (c) reveal and resolve.

A mixin of `State` (state.py): the methods use the state's fields directly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .actions import Action
from .phases import POSITION, RESOLVE

if TYPE_CHECKING:
    from .state import Seat


class Exploration:
    """The three steps of a turn, the return, and the respawn when the hearts run out."""

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
