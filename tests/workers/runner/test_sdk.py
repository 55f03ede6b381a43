"""The SDK's message -> dict (digdown.proto_codec's) gives what json_format gives, on real games;
so does the observation a bot is handed (filled in on first use)."""

from __future__ import annotations

import random

from digdown import wire
from digdown.bot import answer_to_proto
from digdown.proto_codec import lazy_message_to_dict, message_to_dict, reference_message_to_dict
from engine.rules import GameConfig, new_game


def test_message_to_dict_matches_json_format_on_real_games() -> None:
    checked = 0
    for seed, difficulty in [(1, "normal"), (2, "hardcore"), (3, "easy")]:
        state = new_game(GameConfig(seed=seed, num_seats=4, difficulty=difficulty))
        rng = random.Random(seed)
        while not state.is_over:
            legal = state.legal_actions()
            obs = wire.observation_to_proto(state.observation(state.acting_seat))
            assert message_to_dict(obs) == reference_message_to_dict(obs)
            assert lazy_message_to_dict(obs) == reference_message_to_dict(obs)
            for event in state.apply(legal[rng.randrange(len(legal))]):
                msg = wire.event_to_proto(event)
                assert message_to_dict(msg) == reference_message_to_dict(msg)
            checked += 1
    assert checked > 100


def test_answers_by_index_or_action_dict() -> None:
    state = new_game(GameConfig(seed=4, num_seats=2, difficulty="normal"))
    legal = [a.to_dict() for a in state.legal_actions()]
    assert answer_to_proto(1, legal) == wire.action_to_proto(legal[1])
    assert answer_to_proto(dict(legal[0]), legal) == wire.action_to_proto(legal[0])
    for bad in (len(legal), True, {"kind": "NOPE"}, "EXPLORE", {"kind": "MOVE"}):
        try:
            answer_to_proto(bad, legal)  # type: ignore[arg-type]
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} accepted")
