"""The batched environment plays the AEC environment's games, many at once."""

from __future__ import annotations

import os

import pytest

if os.environ.get("CI") != "true":  # CI installs the train extra: there, a missing one fails
    pytest.importorskip("pettingzoo", reason="the train extra is not installed")

import numpy as np

from engine.training import DiggingDownEnv, DiggingDownVectorEnv, rank_rewards


def random_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal index per row."""
    return np.argmax(rng.random(mask.shape) * mask, axis=1)


def test_one_slot_plays_the_aec_environments_games() -> None:
    """Same seed, same actions: the same games, vectors, masks and final rewards."""
    aec, vec = DiggingDownEnv(num_seats=3), DiggingDownVectorEnv(1, num_seats=3)
    aec.reset(seed=4)
    obs, mask, seat = vec.reset(seed=4)
    rng = np.random.default_rng(0)
    for _game in range(3):
        for agent in aec.agent_iter():
            o, _, terminated, _, _ = aec.last()
            if terminated:
                aec.step(None)
                continue
            assert agent == f"seat_{seat[0]}"
            np.testing.assert_array_equal(o["observation"], obs[0])
            np.testing.assert_array_equal(o["action_mask"], mask[0])
            action = random_legal(mask, rng)
            aec.step(int(action[0]))
            record = aec.state.record if aec.state else None
            obs, mask, seat, rewards, done = vec.step(action)
        assert done[0] and vec.finished[0] == aec.state.result
        assert list(rewards[0]) == [aec.final_rewards[a] for a in aec.possible_agents]
        assert record is not None and record == aec.state.record
        aec.reset()


def test_many_games_reset_themselves_and_score_their_seats() -> None:
    vec = DiggingDownVectorEnv(16, num_seats=2)
    obs, mask, _ = vec.reset(seed=1)
    assert obs.shape == (16, vec.encoder.size) and mask.shape == (16, vec.catalog.size)
    rng = np.random.default_rng(1)
    ended = 0
    while ended < 20:
        _obs, mask, _seat, rewards, done = vec.step(random_legal(mask, rng))
        assert mask.any(axis=1).all(), "every slot is at a decision with a legal action"
        for i in np.flatnonzero(done):
            result = vec.finished[i]
            assert result is not None
            assert list(rewards[i]) == rank_rewards(result["ranks"])
            ended += 1
        assert not rewards[~done].any()
    assert vec.games_played == ended


def test_an_illegal_action_is_a_fault() -> None:
    vec = DiggingDownVectorEnv(2, num_seats=2)
    _, mask, seat = vec.reset(seed=3)
    illegal = np.argmin(mask, axis=1)  # an index whose mask is 0
    vec.step(illegal)
    faults = [state.seats[int(s)].faults for state, s in zip(vec.states, seat, strict=True)]
    assert faults == [1, 1]
    with pytest.raises(ValueError, match="need 2 actions"):
        vec.step([0])
