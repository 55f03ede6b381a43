"""The training vector computed from the game (engine/rules/features.py) equals the one
computed from the observation dict a bot receives (ObservationEncoder.encode), everywhere."""

from __future__ import annotations

import os
import random

import pytest

if os.environ.get("CI") != "true":  # CI installs the train extra: there, a missing one fails
    pytest.importorskip("numpy", reason="the train extra is not installed")

import numpy as np

from engine.rules import RULESETS, GameConfig, new_game
from engine.rules.features import features
from engine.training.encoding import ObservationEncoder


@pytest.mark.parametrize("ruleset", ["dd-1", "dd-2"])
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_features_match_the_encoded_observation(ruleset: str, seats: int) -> None:
    encoder = ObservationEncoder(RULESETS[ruleset], seats)
    for seed, difficulty in enumerate(("easy", "normal", "hard", "hardcore")):
        config = GameConfig(seed=seed, num_seats=seats, difficulty=difficulty, ruleset=ruleset)
        state = new_game(config)
        rng = random.Random(seed)
        while True:
            for seat in range(seats):
                from_state = encoder.encode_state(state, seat)
                assert from_state.shape == (encoder.size,)
                np.testing.assert_array_equal(from_state, encoder.encode(state.observation(seat)))
            if state.is_over:
                break
            roll = rng.random()
            if roll < 0.01:
                state.forfeit(state.acting_seat, "gone")
            elif roll < 0.05:
                state.apply_default("timeout")
            else:
                legal = state.legal_actions()
                state.apply(legal[rng.randrange(len(legal))])


def test_numbers_past_a_byte_are_exact() -> None:
    """Small numbers come from shared pieces; a long game's turn (past 255) is packed on its
    own, and the vector still equals the encoded observation (and the list of ints)."""
    encoder = ObservationEncoder(RULESETS["dd-1"], 2)
    state = new_game(GameConfig(seed=3, num_seats=2, difficulty="normal"))
    for turn in (255, 256, 300, 70_000):
        state.turn = turn
        for seat in range(2):
            vector = encoder.encode_state(state, seat)
            np.testing.assert_array_equal(vector, encoder.encode(state.observation(seat)))
            assert features(state, seat) == [int(x) for x in vector]
            assert turn in features(state, seat)
