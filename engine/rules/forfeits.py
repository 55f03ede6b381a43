"""Rules §6, forfeits: a seat leaves at once and the decision in progress carries on.

How the turn carries on is not in the rules; the choices are written at each step.
A mixin of `State` (state.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .phases import BASE, DECIDE, POSITION, RESOLVE

if TYPE_CHECKING:
    from .state import Seat


class Forfeits:
    """Taking a seat out of the game at any point, and carrying the turn on without it."""

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
