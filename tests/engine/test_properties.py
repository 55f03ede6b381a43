"""Properties of the rules engine over many games (hypothesis drives seeds and choices),
on every ruleset."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.rules import (
    ACTION_ARGS,
    RULESETS,
    Action,
    GameConfig,
    IllegalAction,
    new_game,
    replay_record,
)
from engine.rules.ruleset import DIFFICULTIES, ITEM_KINDS, TORCH

configs = st.builds(
    GameConfig,
    seed=st.integers(min_value=0, max_value=2**63 - 1),
    num_seats=st.sampled_from([2, 3, 4]),
    difficulty=st.sampled_from(DIFFICULTIES),
    ruleset=st.sampled_from(sorted(RULESETS)),
)
SLOW = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def play_random(config: GameConfig, choice_seed: int, misbehave: bool = False, each=None):
    """Random play; with `misbehave`, seats also fault and forfeit now and then."""
    state = new_game(config)
    rng = random.Random(choice_seed)
    while not state.is_over:
        legal = state.legal_actions()
        assert legal, "the acting seat must always have a legal action"
        roll = rng.random()
        if misbehave and roll < 0.03:
            state.apply_default("test fault")
        elif misbehave and roll < 0.035:
            state.forfeit(rng.choice(state.alive()), "test forfeit")
        elif len(legal) == 1:
            state.apply_forced()
        else:
            state.apply(rng.choice(legal))
        if each:
            each(state)
    return state


def universe(state) -> list[Action]:
    """Every action shape, legal or not, with arguments near the legal range."""
    out: list[Action] = []
    for kind, args in ACTION_ARGS.items():
        if not args:
            out.append(Action(kind))
        elif args == ("passage",):
            out += [Action(kind, passage=p) for p in range(-1, 5)]
        elif args == ("tool_id",):
            out += [Action(kind, tool_id=t) for t in (0, 82, 85, 90, 98, 108, 200)]
        elif args == ("recipe",):
            out += [Action(kind, recipe=r) for r in ("IRON_SWORD", "DIAMOND_PICKAXE", "X")]
        elif args == ("item",):
            out += [Action(kind, item=i) for i in (TORCH, *ITEM_KINDS, "X")]
        else:
            out += [Action(kind, item=i, to_seat=s) for i in ITEM_KINDS for s in range(-1, 5)]
    return out


def hidden_faces(state) -> set[int]:
    return {c for passage in state.passages for c in passage if c not in state.known}


def card_ids_in(value: Any) -> set[int]:
    """Ids of every card face in an observation (dicts with a material and a name)."""
    found: set[int] = set()
    if isinstance(value, dict):
        if "material" in value and "name" in value and "id" in value:
            found.add(value["id"])
        for v in value.values():
            found |= card_ids_in(v)
    elif isinstance(value, list):
        for v in value:
            found |= card_ids_in(v)
    return found


def keys_in(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_in(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_in(v)}
    return set()


@SLOW
@given(configs, st.integers(0, 2**32), st.booleans())
def test_conservation_after_every_action(config, choice_seed, misbehave):
    def check(state):
        places = state.card_places()
        assert len(places) == 120
        torches = sum(1 for t in state.ids.torches if t in places)
        assert torches == 32

    play_random(config, choice_seed, misbehave, each=check)


@SLOW
@given(configs, st.integers(0, 2**32), st.booleans())
def test_record_replays_to_identical_events_and_result(config, choice_seed, misbehave):
    state = play_random(config, choice_seed, misbehave)
    events, result = replay_record(copy.deepcopy(state.record))
    assert events == state.log
    assert result == state.result
    assert result["reason"] != "turn_limit"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs, st.integers(0, 2**32))
def test_listed_actions_apply_and_others_are_refused(config, choice_seed):
    state = new_game(config)
    rng = random.Random(choice_seed)
    steps = 0
    while not state.is_over and steps < 400:
        legal = state.legal_actions()
        if steps % 7 == 0:
            for action in legal:  # every listed action applies (on a copy)
                copy.deepcopy(state).apply(action)
            before = (len(state.record["entries"]), state.observation(0), len(state.log))
            for action in universe(state):
                if action in legal:
                    continue
                try:
                    state.apply(action)
                except IllegalAction as err:
                    assert str(err)
                else:
                    raise AssertionError(f"{action} is not listed but applied")
            after = (len(state.record["entries"]), state.observation(0), len(state.log))
            assert after == before, "a refused action changed the state"
        state.apply(rng.choice(legal))
        steps += 1


@pytest.mark.slow  # the edit loop (make test-fast) leaves it to make test-apps and make test
@SLOW
@given(configs, st.integers(0, 2**32))
def test_observations_never_show_hidden_faces_or_the_seed(config, choice_seed):
    def check(state):
        hidden = hidden_faces(state)
        for seat in range(len(state.seats)):
            obs = state.observation(seat)
            leaked = card_ids_in(obs) & hidden
            assert not leaked, f"seat {seat} sees hidden cards {leaked}"
            assert "seed" not in keys_in(obs)

    play_random(config, choice_seed, each=check)


def test_same_config_gives_the_same_cave_and_first_lead():
    for seed in (0, 1, 2**63 - 1):
        for n in (2, 3, 4):
            a = new_game(GameConfig(seed=seed, num_seats=n, difficulty="hardcore"))
            b = new_game(GameConfig(seed=seed, num_seats=n, difficulty="hardcore"))
            assert a.record == b.record


def test_every_ruleset_deals_the_same_cave_from_the_same_seed():
    """dd-2 changes only what a return costs (rules §11), never the deal."""
    for seed in (0, 5, 2**40):
        records = [
            new_game(GameConfig(seed=seed, num_seats=3, difficulty="hardcore", ruleset=r)).record
            for r in sorted(RULESETS)
        ]
        for record in records:
            for key in ("cave", "sleeved", "first_lead"):
                assert record[key] == records[0][key]


def test_pinned_deal_is_stable():
    """Golden values: a change here changes every recorded game's cave."""
    state = new_game(GameConfig(seed=0, num_seats=4))
    assert state.record["cave"][0] == [43, 49, 48, 37, 44, 17, 30, 22, 28, 13, 5, 11, 7]
    assert state.record["first_lead"] == 2
    hardcore = new_game(GameConfig(seed=12345, num_seats=2, difficulty="hardcore"))
    assert hardcore.record["sleeved"] == [44, 45, 46]


@pytest.mark.slow
def test_random_play_over_thousands_of_seeds_never_hits_the_guard():
    reasons: dict[str, int] = {}
    for seed in range(2000):
        config = GameConfig(
            seed=seed,
            num_seats=2 + seed % 3,
            difficulty=DIFFICULTIES[seed % 4],
            ruleset=sorted(RULESETS)[seed // 4 % len(RULESETS)],
        )
        state = play_random(config, seed, misbehave=seed % 5 == 0)
        reasons[state.result["reason"]] = reasons.get(state.result["reason"], 0) + 1
    assert "turn_limit" not in reasons


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs, st.integers(0, 2**32), st.lists(st.booleans(), min_size=4, max_size=4))
def test_long_games_between_heuristic_bots_keep_every_invariant(config, choice_seed, smart):
    """Heuristic play reaches what random play rarely does: exchanges, helpers, many rounds."""
    from engine.players import HeuristicPlayer, RandomPlayer

    rng = random.Random(choice_seed)
    bots = [
        HeuristicPlayer(random.Random(rng.random())) if smart[i] else RandomPlayer(random.Random(i))
        for i in range(config.num_seats)
    ]
    state = new_game(config)
    while not state.is_over:
        legal = state.legal_actions()
        assert legal
        seat = state.acting_seat
        if len(legal) == 1:
            state.apply_forced()
        else:
            obs = state.observation(seat)
            assert not card_ids_in(obs) & hidden_faces(state)
            state.apply(bots[seat].act(obs, legal))
        assert len(state.card_places()) == 120
    events, result = replay_record(copy.deepcopy(state.record))
    assert events == state.log and result == state.result
    assert result["reason"] != "turn_limit"
