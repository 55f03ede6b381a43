"""A ruleset is the game's whole contract: every limit is read from it, none is a literal."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from engine.rules import DD1, Action, GameConfig, State, deal_cave
from engine.rules.ruleset import Ruleset


def _game(rules: Ruleset, seed: int = 1, num_seats: int = 3, difficulty: str = "normal") -> State:
    """A game of a ruleset that is not registered (so never reachable from a config)."""
    config = GameConfig(seed=seed, num_seats=num_seats, difficulty=difficulty)
    cave, sleeved, first_lead = deal_cave(rules, config)
    return State(rules, config.to_dict(), cave, sleeved, first_lead)


def _play_randomly(state: State, seed: int) -> None:
    rng = random.Random(seed)
    while not state.is_over:
        state.apply(rng.choice(state.legal_actions()))
        state.card_places()


def test_seat_counts_and_difficulties_come_from_the_ruleset() -> None:
    assert DD1.seat_counts == (2, 3, 4)
    assert DD1.difficulties == ("easy", "normal", "hard", "hardcore")
    with pytest.raises(ValueError, match=r"num_seats must be one of \[2, 3, 4\], got 5"):
        GameConfig(num_seats=5).validate()
    with pytest.raises(ValueError, match="num_seats"):
        GameConfig(num_seats=True).validate()  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="difficulty"):
        GameConfig(difficulty="nightmare").validate()


def test_the_fault_limit_is_the_rulesets() -> None:
    state = _game(replace(DD1, id="two-faults", fault_limit=2))
    seat = state.acting_seat
    state.apply_default("slow")
    assert not state.seats[seat].eliminated
    while state.acting_seat != seat:
        state.apply(state.default_action())
    events = state.apply_default("slow again")
    assert {"kind": "FORFEIT", "seat": seat, "reason": "second fault: slow again"} in events


def test_passages_and_tiles_are_the_rulesets() -> None:
    rules = replace(DD1, id="three-passages-one-tile", passages=3, tiles=1)
    state = _game(rules, seed=4)
    assert [len(p) for p in state.passages] == [17, 17, 16]
    assert state.observation(0)["free_tiles"] == 1
    _play_randomly(state, seed=4)
    assert state.result is not None and state.result["reason"] != "turn_limit"


def test_one_tile_allows_one_peeked_card_at_a_time() -> None:
    state = _game(replace(DD1, id="one-tile", tiles=1), seed=2, num_seats=2)
    state.apply(Action("EXPLORE"))
    state.apply(Action("CONTINUE"))
    state.apply(Action("MOVE", passage=0))
    state.apply(Action("PEEK"))
    state.apply(Action("MOVE", passage=1))
    assert Action("PEEK") not in state.legal_actions()


def test_a_ruleset_that_contradicts_itself_fails_when_defined() -> None:
    with pytest.raises(ValueError, match="seat counts"):
        replace(DD1, id="x", capacity={2: 8, 3: 6, 4: 6, 5: 6})
    with pytest.raises(ValueError, match="more torches than exist"):
        replace(DD1, id="x", start_torches={2: (10, 10), 3: (5, 3), 4: (5, 2)})
    with pytest.raises(ValueError, match="120 cards"):
        _game(replace(DD1, id="x", torch_cards=31))
