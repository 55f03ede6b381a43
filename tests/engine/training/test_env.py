"""The PettingZoo environment: PettingZoo's own API and seed tests, and the ladder's game."""

from __future__ import annotations

import os

import pytest

if os.environ.get("CI") != "true":  # CI installs the train extra: there, a missing one fails
    pytest.importorskip("pettingzoo", reason="the train extra is not installed")

import numpy as np
from pettingzoo.test import api_test, seed_test

from digdown import wire
from engine.training import DiggingDownEnv, rank_rewards
from engine.training.example import run


@pytest.mark.parametrize(("seats", "difficulty"), [(2, "normal"), (3, "hardcore"), (4, "easy")])
def test_pettingzoo_api(seats: int, difficulty: str) -> None:
    api_test(DiggingDownEnv(num_seats=seats, difficulty=difficulty), num_cycles=300)


def test_pettingzoo_seed() -> None:
    seed_test(lambda: DiggingDownEnv(num_seats=3), num_cycles=200)


def play(env: DiggingDownEnv, seed: int, rng_seed: int) -> list[tuple[str, int]]:
    """A whole seeded game with seeded random legal actions; (agent, action) in order."""
    env.reset(seed=seed)
    rng = np.random.default_rng(rng_seed)
    moves = []
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        moves.append((agent, action))
        env.step(action)
    return moves


def test_the_same_seed_gives_the_same_games() -> None:
    a, b = DiggingDownEnv(num_seats=4), DiggingDownEnv(num_seats=4)
    assert play(a, 5, 1) == play(b, 5, 1)
    assert a.game_seed == b.game_seed and a.state is not None and b.state is not None
    assert a.state.record == b.state.record
    # reset() without a seed continues the seeded sequence of games, identically too.
    a.reset()
    b.reset()
    assert a.game_seed == b.game_seed
    c = DiggingDownEnv(num_seats=4)
    c.reset(seed=6)
    assert c.game_seed != a.game_seed


def test_observation_and_actions_are_what_a_bot_gets() -> None:
    env = DiggingDownEnv(num_seats=3, difficulty="hardcore")
    env.reset(seed=9)
    for _ in range(60):
        agent = env.agent_selection
        obs, _, terminated, _, info = env.last()
        if terminated:
            break
        state = env.state
        assert state is not None
        seat = int(agent.removeprefix("seat_"))
        # The same dict a bot gets over gRPC (through the wire and back).
        wire_obs = wire.observation_from_proto(wire.observation_to_proto(info["observation"]))
        assert info["observation"] == state.observation(seat) == wire_obs
        legal = info["legal_actions"]
        assert legal == [a.to_dict() for a in state.legal_actions()] and len(legal) >= 2
        assert int(obs["action_mask"].sum()) == len(legal)
        assert obs["observation"].shape == (env.encoder.size,)
        env.step(int(np.flatnonzero(obs["action_mask"])[-1]))


def test_an_illegal_action_is_a_fault_as_on_the_ladder() -> None:
    """seat_0 answers with an illegal index every time: three faults forfeit it."""
    env = DiggingDownEnv(num_seats=2)
    env.reset(seed=3)
    while not (env.state and env.state.is_over):
        obs, *_ = env.last()
        mask = obs["action_mask"]
        wanted = 0 if env.agent_selection == "seat_0" else 1
        env.step(int(np.flatnonzero(mask == wanted)[0]))
    state = env.state
    faults = [e for e in state.log if e["kind"] == "FAULT"]
    assert [e["seat"] for e in faults] == [0, 0, 0] and "illegal action" in faults[0]["reason"]
    assert state.result is not None and state.result["seats"][0]["ended"] == "forfeited"
    assert env.rewards == {"seat_0": -1.0, "seat_1": 1.0}
    env.reset(seed=1)
    with pytest.raises(ValueError, match="not in 0"):
        env.step(env.catalog.size)


def test_rewards_follow_the_ranks() -> None:
    assert rank_rewards([1, 2]) == [1.0, -1.0]
    assert rank_rewards([1, 1, 3]) == [0.5, 0.5, -1.0]
    assert rank_rewards([2, 1, 3, 4]) == pytest.approx([1 / 3, 1.0, -1 / 3, -1.0])


def test_the_example_loop_plays_and_reports() -> None:
    report = run(games=20, seats=2, difficulty="normal", policy="tabular", seed=0)
    assert report["games"] == 20 and report["games_per_s"] > 0 and report["decisions_per_s"] > 0


def test_the_example_compares_with_the_random_policy_quietly(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from engine.training.example import main

    assert main(["--games", "12", "--seats", "2"]) == 0
    out, err = capsys.readouterr()
    assert "tabular  seat 0 mean reward" in out and "random   seat 0 mean reward" in out
    assert err == "", "no progress bar when the output is not a terminal"


def test_final_rewards_survive_the_documented_loop() -> None:
    env = DiggingDownEnv(num_seats=3)
    env.reset(seed=2)
    for agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        action = (
            None if terminated or truncated else env.action_space(agent).sample(obs["action_mask"])
        )
        env.step(action)
    assert env.rewards == {}  # PettingZoo's: agents leave with their rewards
    assert env.state is not None and env.state.result is not None
    assert list(env.final_rewards.values()) == rank_rewards(env.state.result["ranks"])


def test_the_vector_holds_counts_past_a_byte_exactly() -> None:
    """The fast path reads counts as bytes; a long game's turn (past 255) takes the other."""
    encoder = DiggingDownEnv(num_seats=2).encoder
    for values in ([0, 1, 255], [0, 300, 1], [2, -1, 7]):
        vector = encoder.floats(values)
        assert vector.dtype == np.float32
        assert vector.tolist() == [float(v) for v in values]


def test_each_observation_owns_its_arrays() -> None:
    """Learners keep observations (replay buffers): every call gives new, writable arrays, so
    writing one or stepping on changes no other."""
    env = DiggingDownEnv(num_seats=2)
    env.reset(seed=4)
    agent = env.agent_selection
    first, again = env.observe(agent), env.observe(agent)
    kept = {k: v.copy() for k, v in first.items()}
    for key in ("observation", "action_mask"):
        assert first[key].flags.writeable
        assert not np.shares_memory(first[key], again[key])
    again["observation"][:] = -1
    again["action_mask"][:] = 0
    legal = first["action_mask"].nonzero()[0]
    env.step(int(legal[0]))
    for key, value in kept.items():
        np.testing.assert_array_equal(first[key], value)
    np.testing.assert_array_equal(env.catalog.zeros, 0)
