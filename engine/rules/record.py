"""Game records: re-simulating a record gives the identical events and result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .actions import Action, shared_action
from .errors import IllegalAction
from .ruleset import RULESETS
from .setup import GameConfig
from .shapes import Event, Result
from .state import State
from .versions import RECORD_FORMAT


def state_from_record_setup(record: Mapping[str, Any]) -> State:
    """A fresh state from the record's stored cave (never the RNG)."""
    if record.get("format") != RECORD_FORMAT:
        raise ValueError(f"not a {RECORD_FORMAT} record: format {record.get('format')!r}")
    config = GameConfig.from_dict(record["config"])
    rules = config.validate()
    if record.get("ruleset") != rules.id or record["ruleset"] not in RULESETS:
        raise ValueError(f"record ruleset {record.get('ruleset')!r} does not match its config")
    return State(
        rules, config.to_dict(), record["cave"], record.get("sleeved", []), record["first_lead"]
    )


def apply_entry(state: State, entry: dict[str, Any]) -> list[Event]:
    """Apply one record entry through the same entry point that recorded it."""
    seat = entry.get("seat")
    if type(seat) is not int:
        raise IllegalAction(f"entry {entry!r} names no seat")
    if len(entry) == 3:  # the commonest entry, {seat, action, forced}: nothing else to look for
        action_dict = entry.get("action")
        forced = entry.get("forced")
        if action_dict is not None and forced is not None:
            if seat != state.acting_seat:
                raise IllegalAction(f"entry for seat {seat} but seat {state.acting_seat} is to act")
            action = None
            if type(action_dict) is dict:  # the commonest actions, parsed without the checks
                kind = action_dict.get("kind")
                if type(kind) is str:
                    action = shared_action(action_dict, kind)
            if action is None:
                action = Action.from_dict(action_dict)
            return _apply_action(state, action, bool(forced))
    if "forfeit" in entry:
        return state.forfeit(seat, entry["forfeit"])
    if seat != state.acting_seat:
        raise IllegalAction(f"entry for seat {seat} but seat {state.acting_seat} is to act")
    if "fault" in entry:
        return state.apply_default(entry["fault"])
    return _apply_action(state, Action.from_dict(entry["action"]), bool(entry.get("forced")))


def _apply_action(state: State, action: Action, forced: bool) -> list[Event]:
    if forced:
        if state.legal_actions() != [action]:
            raise IllegalAction(f"entry says {action} was forced, but it was not the only action")
        return state.apply_forced()
    return state.apply(action)


def replay_record(record: Mapping[str, Any]) -> tuple[list[Event], Result | None]:
    """Re-simulate a record: (every event from the start, result or None if unfinished)."""
    state = state_from_record_setup(record)
    for entry in record["entries"]:
        apply_entry(state, entry)
    return state.log, state.result
