"""Rules §9: each conformance example as its own test, on every ruleset.

§11 says §9 holds for dd-2 except 9.4 (what a return costs): that example runs on
dd-1 here and dd-2's own are in test_conformance_dd2.py.
"""

from __future__ import annotations

import random

import pytest

from engine.rules import RULESETS, Action, GameConfig, IllegalAction, new_game
from tests.engine.scenario import SeatSpec, play, scenario


@pytest.fixture(params=sorted(RULESETS))
def ruleset(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def tool_id(state, seat: int, name: str) -> int:
    """The id of an active tool of `seat` whose name contains `name` (e.g. 'Iron Sword')."""
    for t in state.seats[seat].tools:
        if name.lower() in state.tool_table[t].name.lower() and t in state.seats[seat].active:
            return t
    raise AssertionError(f"seat {seat} has no active {name}")


def stone_swords(state, seat: int) -> list[int]:
    return [t for t in state.seats[seat].tools if state.tool_table[t].name.endswith("Stone Sword")]


def test_1_team_example_mob_of_strength_8(ruleset):
    # A sleeved Enderman on hardcore has strength 6 + 2 = 8.
    state = scenario(
        ruleset=ruleset,
        difficulty="hardcore",
        passages=[["Enderman"], ["Dirt"], [], []],
        sleeved=[(0, 0)],
        seats=[SeatSpec(tools=["iron sword"]), SeatSpec(tools=["stone sword", "stone sword"])],
    )
    assert state.strength[state.passages[0][-1]] == 8
    play(state, "EXPLORE", "CONTINUE", "MOVE 0", "READY", "MOVE 0", "READY", "ATTEMPT")
    play(state, f"COMMIT {tool_id(state, 0, 'Iron Sword')}", "STOP")
    first, second = stone_swords(state, 1)
    play(state, f"COMMIT {first}")
    assert state.committed == 6 and state.passages[0]  # not yet
    events = play(state, f"COMMIT {second}")
    resolved = [e for e in events if e["kind"] == "RESOLVED"]
    assert resolved and resolved[0]["seat"] == 0 and resolved[0]["card"]["name"] == "Enderman"
    assert not state.passages[0]
    # every committed tool flipped inactive
    assert not state.seats[0].active and not state.seats[1].active


def test_1_excess_strength_is_ignored_and_committing_stops(ruleset):
    state = scenario(
        ruleset=ruleset,
        difficulty="hardcore",
        passages=[["Enderman"], ["Dirt"], [], []],
        sleeved=[(0, 0)],
        seats=[
            SeatSpec(tools=["diamond sword", "stone sword"]),
            SeatSpec(tools=["iron sword", "stone sword"]),
        ],
    )
    play(state, "EXPLORE", "CONTINUE", "MOVE 0", "READY", "MOVE 0", "READY", "ATTEMPT")
    play(state, f"COMMIT {tool_id(state, 0, 'Diamond Sword')}", "STOP")
    events = play(state, f"COMMIT {tool_id(state, 1, 'Iron Sword')}")  # 6 + 4 = 10 >= 8
    assert [e for e in events if e["kind"] == "RESOLVED"]
    # resolution is over: the helper's stone sword was never asked for and stays active
    assert tool_id(state, 1, "Stone Sword") in state.seats[1].active
    assert state.phase == "DECIDE"  # no other passage had a seat: next turn


def test_2_fresh_four_seat_game_layout(ruleset):
    for seed in range(20):
        state = new_game(GameConfig(seed=seed, num_seats=4, ruleset=ruleset))
        assert [len(p) for p in state.passages] == [13, 13, 12, 12]
        depth = {"DEEPSLATE": 0, "STONE": 1, "DIRT": 2}
        for passage in state.passages:
            layers = [depth[state.rows[c].material] for c in passage]  # bottom -> top
            assert layers == sorted(layers)
        places = state.card_places()
        assert len(places) == 120


def test_3_hearts_run_out_everyone_respawns(ruleset):
    state = scenario(
        ruleset=ruleset,
        passages=[["Creeper"], ["Iron Ore"], [], []],
        hearts=1,
        seats=[
            SeatSpec(unsecured=["Gold Ore"], completed=["GOLD"]),
            SeatSpec(unsecured=["Coal Ore"]),
        ],
    )
    events = play(state, "EXPLORE", "CONTINUE", "MOVE 0", "READY", "MOVE 0", "READY", "LEAVE")
    kinds = [e["kind"] for e in events]
    assert "RESPAWN" in kinds and kinds.count("LOOT_LOST") == 2
    assert not state.seats[0].unsecured and not state.seats[1].unsecured
    assert state.seats[0].completed == ["GOLD"]  # completed objectives stay completed
    assert state.phase == "BASE" and state.round == 2 and state.hearts == 4
    # no torches were paid for the respawn: 5 - 1 (explore, paid by the lead) and 5
    assert len(state.seats[0].torches) == 4 and len(state.seats[1].torches) == 5
    assert "Iron Ore" in [state.rows[c].name for c in state.passages[1]]  # rest of turn skipped
    state.card_places()


@pytest.mark.parametrize("torches, own_secured", [(1, False), (2, True)])
def test_4_non_lead_return(torches, own_secured):
    state = scenario(
        passages=[["Dirt"], ["Dirt"], [], []],
        seats=[
            SeatSpec(unsecured=["Gold Ore"]),
            SeatSpec(torches=torches, stash=1, unsecured=["Iron Ore", "Coal Ore"]),
        ],
    )
    events = play(state, "EXPLORE", "RETURN")
    assert {"kind": "TORCH_PAID", "seat": 1, "amount": torches} in events
    secured = {
        e["seat"]: [c["name"] for c in e["cards"]] for e in events if e["kind"] == "LOOT_SECURED"
    }
    lost = {e["seat"]: [c["name"] for c in e["cards"]] for e in events if e["kind"] == "LOOT_LOST"}
    assert secured[0] == ["Gold Ore"]
    if own_secured:
        assert secured[1] == ["Iron Ore", "Coal Ore"] and 1 not in lost
    else:
        assert lost[1] == ["Iron Ore", "Coal Ore"] and 1 not in secured
    # the next base phase: secured loot shows up in the inventories
    assert state.phase == "BASE"
    obs = state.observation(0)
    assert obs["players"][0]["items"]["GOLD"] == 1
    assert obs["players"][1]["items"]["IRON"] == (1 if own_secured else 0)
    # TORCH x2 (Coal Ore) becomes two torch cards from the supply
    assert obs["players"][1]["torches"] == (2 if own_secured else 0)
    state.card_places()


def test_5_peek_informs_every_seat_and_cannot_repeat(ruleset):
    state = scenario(
        ruleset=ruleset,
        passages=[["Dirt", "Gold Ore"], ["Dirt"], [], []],
        seats=[SeatSpec(), SeatSpec(), SeatSpec()],
    )
    play(state, "EXPLORE", "CONTINUE", "CONTINUE", "MOVE 0")
    assert "top" not in state.observation(1)["passages"][0]
    events = play(state, "PEEK")
    assert events[-1]["kind"] == "PEEK" and events[-1]["card"]["name"] == "Gold Ore"
    for seat in range(3):
        assert state.observation(seat)["passages"][0]["top"]["name"] == "Gold Ore"
        assert state.observation(seat)["passages"][0]["tile"] is True
    assert Action("PEEK") not in state.legal_actions()
    with pytest.raises(IllegalAction, match="PEEK"):
        state.apply(Action("PEEK"))
    # another seat may not peek there either
    play(state, "READY", "MOVE 0")
    assert Action("PEEK") not in state.legal_actions()


def test_6_both_objectives_win_at_once_though_unsecured(ruleset):
    state = scenario(
        ruleset=ruleset,
        passages=[["Deepslate Gold Ore"], ["Deepslate Diamond Ore"], ["Dirt"], []],
        seats=[SeatSpec(tools=["diamond pickaxe", "diamond pickaxe"]), SeatSpec()],
    )
    picks = state.seats[0].tools
    play(state, "EXPLORE", "CONTINUE", "MOVE 0", "READY", "MOVE 2", "READY")
    events = play(state, "ATTEMPT", f"COMMIT {picks[0]}")
    assert {"kind": "OBJECTIVE", "seat": 0, "objective": "GOLD"} in events
    # seat 1 at passage 2 (Dirt) leaves; next turn seat 1 leads and both keep their places
    play(state, "LEAVE", "EXPLORE", "CONTINUE", "READY", "MOVE 1", "READY")
    events = play(state, "ATTEMPT", f"COMMIT {picks[1]}")
    assert state.is_over and state.result["reason"] == "won" and state.result["winner"] == 0
    assert events[-1]["kind"] == "GAME_END"
    assert state.result["ranks"][0] == 1 and state.result["seats"][0]["ended"] == "won"
    assert state.seats[0].unsecured  # never secured


def test_7_no_torch_anywhere_is_eliminated_at_end_of_base_phase(ruleset):
    state = scenario(
        ruleset=ruleset,
        passages=[["Dirt"], ["Dirt"], [], []],
        seats=[SeatSpec(torches=0, stash=0), SeatSpec(), SeatSpec()],
        base_phase=True,
        lead=1,
    )
    # base phase runs in seat order from the round starter (seat 1)
    assert state.acting_seat == 1
    play(state, "DONE", "DONE")
    assert state.acting_seat == 0 and state.legal_actions() == [Action("DONE")]
    events = play(state, "DONE")
    assert {"kind": "ELIMINATED", "seat": 0, "reason": "no torch in inventory or stash"} in events
    assert state.seats[0].eliminated and 0 not in state.alive()


def test_7_lead_without_torch_in_inventory_can_only_return(ruleset):
    state = scenario(
        ruleset=ruleset,
        passages=[["Dirt"], ["Dirt"], [], []],
        seats=[SeatSpec(torches=0, stash=3), SeatSpec()],
    )
    assert state.acting_seat == 0 and state.legal_actions() == [Action("RETURN")]


def test_8_card_and_torch_conservation_after_every_action(ruleset):
    for seed in range(40):
        state = new_game(GameConfig(seed=seed, num_seats=2 + seed % 3, ruleset=ruleset))
        rng = random.Random(seed)
        while not state.is_over:
            state.apply(rng.choice(state.legal_actions()))
            places = state.card_places()
            torch_places = [places[t] for t in state.ids.torches]
            assert len(torch_places) == 32


def test_9_every_game_ends_well_before_the_guard(ruleset):
    longest = 0
    for seed in range(300):
        config = GameConfig(seed=seed, num_seats=2 + seed % 3, difficulty="normal", ruleset=ruleset)
        state = new_game(config)
        rng = random.Random(seed)
        while not state.is_over:
            state.apply(rng.choice(state.legal_actions()))
        assert state.result["reason"] != "turn_limit"
        longest = max(longest, state.turn)
    assert longest < 400
