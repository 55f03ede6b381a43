"""engine.wire: engine dicts <-> digdown.v1 messages must round-trip exactly.

Bots in other languages only ever see the proto form, so any key the engine
emits that the proto cannot carry (or carries differently) is a contract bug.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from engine import wire
from engine.rules import GameConfig, new_game
from engine.rules.actions import ACTION_ARGS
from protos.digdown.v1 import game_pb2

CARD = {
    "id": 7,
    "material": "DIRT",
    "name": "Iron Ore",
    "tool": "PICKAXE",
    "strength": 2,
    "damage": 0,
    "loot": "IRON",
    "torches": 0,
    "enchanted": False,
}

SAMPLE_ACTIONS: list[dict[str, Any]] = [
    {"kind": "EXCHANGE", "recipe": "IRON_SWORD"},
    {"kind": "TRADE", "item": "GOLD"},
    {"kind": "GIVE", "item": "IRON", "to_seat": 0},
    {"kind": "STASH"},
    {"kind": "UNSTASH"},
    {"kind": "DISCARD", "item": "TORCH"},
    {"kind": "DONE"},
    {"kind": "EXPLORE"},
    {"kind": "CONTINUE"},
    {"kind": "RETURN"},
    {"kind": "MOVE", "passage": 0},
    {"kind": "PEEK"},
    {"kind": "READY"},
    {"kind": "ATTEMPT"},
    {"kind": "LEAVE"},
    {"kind": "COMMIT", "tool_id": 82},
    {"kind": "STOP"},
]


def test_action_table_covers_every_kind_of_the_engine_and_the_proto() -> None:
    assert set(wire.ACTION_FIELDS) == set(ACTION_ARGS)
    for kind, (_, args) in wire.ACTION_FIELDS.items():
        assert args == ACTION_ARGS[kind], kind
    oneof = game_pb2.Action.DESCRIPTOR.oneofs_by_name["kind"]
    assert {f.name for f in oneof.fields} == set(wire.FIELD_KINDS)


@pytest.mark.parametrize("action", SAMPLE_ACTIONS, ids=lambda a: a["kind"])
def test_action_round_trip(action: dict[str, Any]) -> None:
    msg = wire.action_to_proto(action)
    assert wire.action_from_proto(msg) == action
    # Zero-valued arguments (passage 0, seat 0) must survive the wire too.
    again = game_pb2.Action.FromString(msg.SerializeToString())
    assert wire.action_from_proto(again) == action


def test_action_errors_are_wire_errors() -> None:
    with pytest.raises(wire.WireError, match="no kind"):
        wire.action_from_proto(game_pb2.Action())
    with pytest.raises(wire.WireError, match="unknown action kind"):
        wire.action_to_proto({"kind": "JUMP"})
    with pytest.raises(wire.WireError, match="needs 'passage'"):
        wire.action_to_proto({"kind": "MOVE"})
    with pytest.raises(wire.WireError):
        wire.action_to_proto({"kind": "MOVE", "passage": "left"})


def test_doc_shaped_observation_round_trip_keeps_absent_fields_absent() -> None:
    player = {
        "seat": 0,
        "colour": "RED",
        "capacity": 8,
        "torches": 6,
        "items": {"IRON": 1},
        "stash": 4,
        "tools": [
            {"id": 82, "kind": "SWORD", "name": "Stone Sword", "strength": 2, "active": True}
        ],
        "position": -1,
        "unsecured": [CARD],
        "secured": [],
        "completed": [],
        "eliminated": False,
        "forfeited": False,
        "faults": 0,
        "base_actions": 0,
        "moves": 0,
        "ready": False,
    }
    obs = {
        "ruleset": "dd-1",
        "engine_version": "x",
        "seat": 0,
        "num_seats": 2,
        "difficulty": "normal",
        "objectives": ["GOLD", "DIAMOND"],
        "phase": "POSITION",
        "round": 1,
        "turn": 1,
        "lead": 0,
        "round_starter": 0,
        "acting_seat": 0,
        "hearts": 4,
        "supply": 12,
        "free_tiles": 5,
        "exchange_stack": {"IRON_SWORD": 4},
        "passages": [
            {
                "index": 0,
                "count": 2,
                "backs": ["STONE", "DIRT"],
                "sleeved": [False, False],
                "tile": True,
                "top": CARD,
            },
            {"index": 1, "count": 0, "backs": [], "sleeved": [], "tile": False},
        ],
        "players": [player],
        "unseen": [{"material": "DIRT", "name": "Dirt", "count": 3}],
    }
    back = wire.observation_from_proto(wire.observation_to_proto(obs))
    assert back == obs
    assert "top" not in back["passages"][1]
    assert "resolution" not in back


def test_unknown_keys_are_refused_so_contract_drift_is_caught() -> None:
    with pytest.raises(wire.WireError, match="Event"):
        wire.event_to_proto({"kind": "MOVE", "seat": 1, "colour": "RED"})


def test_event_keeps_only_its_keys_even_zero_values() -> None:
    event = {"kind": "MOVE", "seat": 0, "passage": 0}
    assert wire.event_from_proto(wire.event_to_proto(event)) == event
    end = {"kind": "GAME_END", "reason": "won", "seat": 1, "ranks": [2, 1]}
    assert wire.event_from_proto(wire.event_to_proto(end)) == end
    peek = {"kind": "PEEK", "seat": 1, "passage": 3, "card": CARD}
    assert wire.event_from_proto(wire.event_to_proto(peek)) == peek


def test_config_seed_is_int64_and_comes_back_as_int() -> None:
    config = {"ruleset": "dd-1", "seed": 2**63 - 1, "num_seats": 4, "difficulty": "hard"}
    assert wire.config_from_proto(wire.config_to_proto(config)) == config
    assert wire.config_from_proto(game_pb2.GameConfig(num_seats=2))["ruleset"] == "dd-1"


def test_record_entries_of_every_shape_round_trip() -> None:
    record = {
        "format": "digdown-record/1",
        "ruleset": "dd-1",
        "engine_version": "x",
        "config": {"ruleset": "dd-1", "seed": 5, "num_seats": 2, "difficulty": "easy"},
        "cave": [[1, 2, 3], [4], [], [5, 6]],
        "sleeved": [],
        "first_lead": 1,
        "entries": [
            {"seat": 1, "action": {"kind": "MOVE", "passage": 0}, "forced": False},
            {"seat": 1, "action": {"kind": "READY"}, "forced": True},
            {"seat": 0, "fault": "timeout"},
            {"seat": 0, "forfeit": "crashed"},
        ],
    }
    assert wire.record_from_proto(wire.record_to_proto(record)) == record


def _random_game(seed: int) -> Iterator[tuple[str, Any]]:
    """Plays a random game with the real engine, with a few faults and a forfeit."""
    rng = random.Random(seed)
    difficulty = ["easy", "normal", "hard", "hardcore"][seed % 4]
    num_seats = 2 + seed % 3
    state = new_game(GameConfig(seed=seed, num_seats=num_seats, difficulty=difficulty))
    steps = 0
    while not state.is_over:
        seat = state.acting_seat
        legal = state.legal_actions()
        yield "legal", [a.to_dict() for a in legal]
        yield "observation", state.observation(seat)
        roll = rng.random()
        if roll < 0.01:
            events = state.apply_default("test fault")
        elif steps == 30 and num_seats > 2:
            events = state.forfeit(seat, "test forfeit")
        else:
            events = state.apply(rng.choice(legal))
        steps += 1
        yield "events", events
    yield "result", state.result
    yield "record", state.record


@pytest.mark.parametrize("seed", range(12))
def test_everything_a_real_game_emits_round_trips(seed: int) -> None:
    for what, value in _random_game(seed):
        if what == "legal":
            assert [wire.action_from_proto(wire.action_to_proto(a)) for a in value] == value
        elif what == "observation":
            assert wire.observation_from_proto(wire.observation_to_proto(value)) == value
        elif what == "events":
            assert [wire.event_from_proto(wire.event_to_proto(e)) for e in value] == value
        elif what == "result":
            assert wire.result_from_proto(wire.result_to_proto(value)) == value
        else:
            assert wire.record_from_proto(wire.record_to_proto(value)) == value
