"""A game of Digging Down in progress, with OpenSpiel's game API (rules §4-§6).

`State` is the `Table` (all of a game's data) plus the handful of methods a
caller needs: who acts, what is legal, what a seat sees, and the four recorded
entry points. Each method is a thin call into the rules functions; it adds
only the record entry and the hand-over of the events an entry caused. The
state holds no RNG: the cave is dealt before it exists (see `setup.py`), so a
state is a pure function of its setup and its recorded entries.
"""

from __future__ import annotations

from typing import Any, Final

from .actions import Action
from .conservation import card_places
from .errors import GameOver, IllegalAction
from .forfeits import forfeit
from .legal import default_action, legal_actions, why_illegal
from .observation import observe
from .rounds import start_round
from .ruleset import Ruleset
from .shapes import Config, Event, Observation
from .table import Seat, Table
from .transitions import play_action, play_fault


class State(Table):
    """A game in progress. Build one with `new_game` (setup.py) or from a record."""

    def __init__(
        self,
        rules: Ruleset,
        config: Config,
        cave: list[list[int]],
        sleeved: list[int],
        first_lead: int,
    ) -> None:
        super().__init__(rules, config, cave, sleeved, first_lead)
        # The record's entries (the same list as record["entries"]), and the legal
        # actions of the decision at `_legal_ply` entries (computed once per decision).
        self.entries: list[dict[str, Any]] = self.record["entries"]
        self._legal_ply = -1
        self._legal: list[Action] = []
        self.pending.append({"seat": first_lead, "kind": "GAME_START"})
        start_round(self)
        self._flush()

    # ------------------------------------------------------------- queries

    def legal_actions(self) -> list[Action]:
        """The complete list of legal actions of the acting seat (never empty until the end)."""
        if self.is_over:
            return []
        ply = len(self.entries)
        if self._legal_ply != ply:
            self._legal = legal_actions(self)
            self._legal_ply = ply
        return self._legal

    def default_action(self) -> Action:
        """Rules §6: the action a fault of the acting seat plays."""
        if self.is_over:
            raise GameOver("the game is over")
        return default_action(self, self.legal_actions())

    def observation(self, seat: int) -> Observation:
        """What `seat` may see (rules §3): public information only."""
        return observe(self, seat)

    def card_places(self) -> dict[int, str]:
        """Where every card of the box is. Raises if a card is in two places or none."""
        return card_places(self)

    # ------------------------------------------------------ recorded entries

    def apply(self, action: Action) -> list[Event]:
        """Apply a legal action of the acting seat; returns the events it caused."""
        if self.is_over:
            raise GameOver("the game is over")
        legal = self.legal_actions()
        listed = _listed(action, legal)
        if listed is None:
            raise IllegalAction(why_illegal(self, action, legal))
        self.entries.append(_entry(self.acting_seat, listed.to_dict(), False))
        play_action(self, listed)
        events = self.pending
        self.pending = []
        self.log.extend(events)
        return events

    def apply_forced(self) -> list[Event]:
        """Play the only legal action (rules §6: the engine plays single-choice decisions)."""
        legal = self.legal_actions()
        if self.is_over:
            raise GameOver("the game is over")
        if len(legal) != 1:
            raise IllegalAction(f"the decision has {len(legal)} legal actions, not one")
        self._record(_entry(self.acting_seat, legal[0].to_dict(), True))
        play_action(self, legal[0])
        return self._flush()

    def apply_default(self, reason: str) -> list[Event]:
        """A fault of the acting seat: count it and play the §6 default; the last one forfeits."""
        if self.is_over:
            raise GameOver("the game is over")
        self._record({"seat": self.acting_seat, "fault": reason})
        play_fault(self, reason)
        return self._flush()

    def forfeit(self, seat_index: int, reason: str) -> list[Event]:
        """Forfeit a seat at once (rules §6: a dead bot)."""
        if self.is_over:
            raise GameOver("the game is over")
        if not 0 <= seat_index < len(self.seats) or self.seats[seat_index].eliminated:
            raise IllegalAction(f"seat {seat_index} is not in the game")
        self._record({"seat": seat_index, "forfeit": reason})
        forfeit(self, self.seats[seat_index], reason)
        return self._flush()

    def _record(self, entry: dict[str, Any]) -> None:
        self.entries.append(entry)

    def _flush(self) -> list[Event]:
        """Hand out the events of the entry just applied, and log them."""
        events, self.pending = self.pending, []
        self.log.extend(events)
        return events


def _listed(action: Action, legal: list[Action]) -> Action | None:
    """The listed (shared) instance equal to `action`, None when it is not legal: by
    identity first (parsed actions are the shared ones), then by value."""
    for listed in legal:
        if listed is action:
            return listed
    for listed in legal:
        if listed == action:
            return listed
    return None


# A record entry's keys in their recorded order, per seat and forcedness (at 2 * seat and
# 2 * seat + 1): an entry is a copy of one of these (a block copy, where a dict display
# inserts every key) with its action set.
_ENTRIES: Final[list[dict[str, Any]]] = [
    {"seat": s, "action": None, "forced": forced} for s in range(16) for forced in (False, True)
]


def _entry(seat: int, action: dict[str, Any], forced: bool) -> dict[str, Any]:
    """The record entry {seat, action, forced} of an action played."""
    if 0 <= seat < 16:
        entry = _ENTRIES[2 * seat + 1 if forced else 2 * seat].copy()
        entry["action"] = action
        return entry
    return {"seat": seat, "action": action, "forced": forced}


__all__ = ["Seat", "State"]
