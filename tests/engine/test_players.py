"""The in-process bots: legality, determinism, and that the heuristic plays well."""

from __future__ import annotations

import random
from typing import Any

import pytest

from engine.players import PLAYERS, HeuristicPlayer, Player, RandomPlayer
from engine.rules import Action, GameConfig, new_game
from engine.simulate import play_out, simulate


def _play(seed: int, num_seats: int, difficulty: str, names: list[str]) -> int:
    """Play one game asking the bots at every choice; returns the number of choices."""
    state = new_game(GameConfig(seed=seed, num_seats=num_seats, difficulty=difficulty))
    bots = [PLAYERS[n](random.Random(seed * 8 + s)) for s, n in enumerate(names)]

    def choose(seat: int, observation: dict[str, Any], legal: list[Action]) -> Action:
        action = bots[seat].act(observation, list(legal))
        assert action in legal, f"seed {seed}: {bots[seat].name} played illegal {action}"
        return action

    return play_out(state, choose)[1]


def test_registry_builds_bots_that_follow_the_protocol() -> None:
    assert set(PLAYERS) >= {"random", "heuristic"}
    for name, factory in PLAYERS.items():
        bot = factory(random.Random(0))
        assert isinstance(bot, Player)
        assert bot.name == name


@pytest.mark.parametrize("num_seats", [2, 3, 4])
@pytest.mark.parametrize("difficulty", ["easy", "normal", "hard", "hardcore"])
def test_bots_only_return_legal_actions(num_seats: int, difficulty: str) -> None:
    for seed in range(6):
        assert _play(seed, num_seats, difficulty, ["random"] * num_seats) > 0
        _play(seed, num_seats, difficulty, ["heuristic", "random", "heuristic", "random"])


def test_random_bot_uses_only_its_own_rng() -> None:
    """Same seed, same choices; the global RNG is neither read nor disturbed."""
    legal_game = new_game(GameConfig(seed=3, num_seats=2))
    legal = legal_game.legal_actions()
    obs = legal_game.observation(legal_game.acting_seat)
    random.seed(12345)
    before = random.getstate()
    a = [RandomPlayer(random.Random(9)).act(obs, legal) for _ in range(5)]
    b = [RandomPlayer(random.Random(9)).act(obs, legal) for _ in range(5)]
    assert a == b
    assert random.getstate() == before


def test_heuristic_games_are_reproducible() -> None:
    first = simulate(5, 3, "normal", ["heuristic"], seed=40).to_dict()
    second = simulate(5, 3, "normal", ["heuristic"], seed=40).to_dict()
    assert first["turns_mean"] == second["turns_mean"]
    assert first["end_reasons"] == second["end_reasons"]


def test_heuristic_never_leaves_more_than_capacity_or_no_torch() -> None:
    """Its base phase ends by its own DONE, not by the engine's forced discards."""
    bot = HeuristicPlayer(random.Random(0))

    def base_ends_by_done(seat: int, obs: dict[str, Any], legal: list[Action]) -> Action:
        action = bot.act(obs, legal)
        if action.kind == "DONE":
            me = obs["players"][seat]
            assert me["torches"] + sum(me["items"].values()) <= me["capacity"]
        return action

    for seed in range(10):
        state = new_game(GameConfig(seed=seed, num_seats=3))
        play_out(state, base_ends_by_done)


@pytest.mark.parametrize("num_seats", [2, 3, 4])
def test_heuristic_beats_random_seats(num_seats: int) -> None:
    """Rules §10: one heuristic seat against random seats should take rank 1 nearly always."""
    summary = simulate(150, num_seats, "normal", ["heuristic", "random"], seed=1000).to_dict()
    assert summary["bot_rank1_share"]["heuristic"] >= 0.6


@pytest.mark.parametrize("num_seats", [2, 3, 4])
def test_heuristic_games_end_with_a_winner_on_normal(num_seats: int) -> None:
    """Rules §10: careful play on normal ends with a winner well over half the time."""
    summary = simulate(100, num_seats, "normal", ["heuristic"], seed=2000).to_dict()
    assert summary["won_share"] >= 0.5
    assert summary["end_reasons"].get("turn_limit", 0) == 0
