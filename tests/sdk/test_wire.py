"""digdown.wire: engine dicts <-> digdown.v1 messages must round-trip exactly.

Bots in other languages only ever see the proto form, so any key the engine
emits that the proto cannot carry (or carries differently) is a contract bug.

The generic conversions run on digdown.proto_codec's fast converters; json_format
(`ParseDict` / `MessageToDict`) is the reference they must equal, on everything
real games emit and send.
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message

import digdown.bot
from digdown import proto_codec, wire
from digdown.proto_codec import (
    dict_to_message,
    message_to_dict,
    reference_dict_to_message,
    reference_message_to_dict,
)
from digdown.v1 import bot_pb2, engine_pb2, game_pb2, ladder_pb2
from engine import sessions
from engine.rules import RECORD_FORMAT, GameConfig, new_game
from engine.rules.actions import ACTION_ARGS

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


def test_the_sdk_names_the_engines_record_format() -> None:
    """The SDK cannot import the engine, so it names the format itself: the same one."""
    assert wire.RECORD_FORMAT == RECORD_FORMAT
    assert sessions.REPLAY_FORMAT == wire.REPLAY_FORMAT


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
    # Deep down too, and the error says where (json_format's message, as before).
    obs = _observation_with_a_card()
    obs["players"][0]["unsecured"][0]["colour"] = "RED"
    with pytest.raises(wire.WireError, match=r'cannot read Observation: .*"colour".*unsecured'):
        wire.observation_to_proto(obs)
    with pytest.raises(wire.WireError, match=r"cannot read Card: .*strength"):
        wire.parse({**CARD, "strength": "strong"}, game_pb2.Card)


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
        if roll < 0.01 or steps == 10:
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


# --- the fast converters against json_format -------------------------------------


def _observation_with_a_card() -> dict[str, Any]:
    """A real observation in which players[0] holds an unsecured card."""
    for what, value in _random_game(3):
        if what == "observation" and value["players"][0]["unsecured"]:
            return value
    raise AssertionError("no unsecured card in the whole game")


def _same_dict(msg: Message) -> dict[str, Any]:
    """message_to_dict(msg), checked equal to json_format's dict."""
    fast, ref = message_to_dict(msg), reference_message_to_dict(msg)
    assert fast == ref, type(msg).__name__
    # Keys in field order (MessageToDict puts the fields holding a default last).
    assert list(fast) == [f.name for f in msg.DESCRIPTOR.fields if f.name in fast]
    return fast


def _same_message(d: dict[str, Any], msg_cls: type[Message]) -> Message:
    """dict_to_message(d), checked equal to ParseDict's message (presence included)."""
    fast, ref = dict_to_message(d, msg_cls), reference_dict_to_message(d, msg_cls)
    assert fast == ref, msg_cls.__name__
    assert fast.SerializeToString(deterministic=True) == ref.SerializeToString(deterministic=True)
    return fast


_DICT_SHAPES = {
    "observation": game_pb2.Observation,
    "result": game_pb2.Result,
}


@pytest.mark.parametrize("seed", range(8))
def test_fast_converters_equal_json_format_on_real_games(seed: int) -> None:
    """Observations, legal actions, events (faults, forfeits), results and records."""
    kinds: set[str] = set()
    for what, value in _random_game(seed):
        if what in _DICT_SHAPES:
            msg = _same_message(value, _DICT_SHAPES[what])
            assert _same_dict(msg) == value
        elif what == "events":
            for event in value:
                kinds.add(event["kind"])
                msg = _same_message(event, game_pb2.Event)
                _same_dict(msg)
                assert wire.event_from_proto(msg) == event
        elif what == "legal":
            msgs = wire.actions_to_proto(value)
            for msg in msgs:
                _same_dict(msg)
            _same_dict(game_pb2.LegalActions(actions=msgs))
        else:
            msg = wire.record_to_proto(value)
            plain = {k: v for k, v in value.items() if k not in ("cave", "entries")}
            _same_message(plain, game_pb2.Record)
            _same_message(value["config"], game_pb2.GameConfig)
            _same_dict(msg)
            assert wire.record_from_proto(msg) == value
    assert {"FAULT", "GAME_END"} <= kinds
    if seed % 3:  # 3- and 4-seat games forfeit a seat
        assert "FORFEIT" in kinds


def test_fast_converters_equal_json_format_on_what_the_service_sends() -> None:
    """Every message of a game driven through engine.sessions, as the server sends them."""
    store = sessions.SessionStore()
    config = game_pb2.GameConfig(seed=2**62 + 7, num_seats=4, difficulty="hardcore")
    game, events = store.create(config, [game_pb2.SeatInfo(seat=i, bot=f"b{i}") for i in range(4)])
    response: Message = engine_pb2.NewGameResponse(
        game_id=game.game_id, events=wire.events_to_proto(events)
    )
    game.fill_next(response)
    rng = random.Random(5)
    sent = 0
    while response.WhichOneof("next") == "decision":
        d = response.decision
        _same_dict(response)
        _same_dict(d.observation)
        _same_dict(bot_pb2.DecisionRequest(
            game_id=game.game_id, seat=d.seat, observation=d.observation,
            legal_actions=d.legal_actions, events=response.events, ply=d.ply,
        ))  # fmt: skip
        request = engine_pb2.StepRequest(game_id=game.game_id, seat=d.seat, ply=d.ply)
        if sent == 40:
            request.forfeit = "dead bot"
        elif rng.random() < 0.02:
            request.fault = "timeout"
        else:
            request.action.CopyFrom(rng.choice(d.legal_actions))
        _same_dict(request)
        with game.lock:
            response = sessions.step(game, request)
        sent += 1
    _same_dict(response)
    _same_dict(response.result)
    _same_dict(wire.record_to_proto(game.state.record))
    replay = game.replay()
    replay_dict = _same_dict(replay)
    assert replay_dict["config"]["seed"] == 2**62 + 7  # int64 as int, as before
    assert {"FAULT", "FORFEIT"} <= {e.kind for e in replay.events}
    # Messages with oneofs parse through ParseDict itself; the result is the same message.
    for msg in (replay, response, request):
        assert dict_to_message(message_to_dict(msg), type(msg)) == msg


# The only dicts the fast path takes and ParseDict refuses (module docstring of
# digdown.proto_codec): an int for a bool, a non-list for a repeated field, a
# non-dict for a map, bytes for a string. ParseDict's messages for those:
_KNOWN_LOOSENESS = re.compile(
    r"Expected true or false without quotes|repeated field \w+ must be in \[\]"
    r"|Map field \w+ must be in a dict|bytes-like object"
)
_WRONG_VALUES: list[Any] = [
    None, 0, 1, -1, 2**31, 2**70, True, False, "", "x", "7", 7.0, 7.5, b"x",
    [], [1], ["a"], [None], [True], [{}], [{"nope": 1}], {}, {"a": 1}, {"a": None}, {"id": 1},
]  # fmt: skip


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(obj, dict):
        items: Any = obj.items()
    elif isinstance(obj, list):
        items = enumerate(obj)
    else:
        return
    for k, v in items:
        yield (*prefix, k)
        yield from _paths(v, (*prefix, k))


def test_fast_parse_accepts_and_refuses_like_parse_dict_on_broken_dicts() -> None:
    """Real dicts with one value replaced (or a key renamed or added): same outcome."""
    samples: list[tuple[dict[str, Any], type[Message]]] = []
    for what, value in _random_game(2):
        if what == "observation" and len(samples) < 40:
            samples.append((value, game_pb2.Observation))
        elif what == "events":
            samples.extend((e, game_pb2.Event) for e in value)
        elif what == "result":
            samples.append((value, game_pb2.Result))
    rng = random.Random(11)
    outcomes = {"equal": 0, "refused": 0, "loose": 0}
    for _ in range(1500):
        d, msg_cls = rng.choice(samples)
        d = copy.deepcopy(d)
        path = rng.choice(list(_paths(d)))
        parent = d
        for k in path[:-1]:
            parent = parent[k]
        key, roll = path[-1], rng.random()
        if roll < 0.1 and isinstance(parent, dict):
            parent["colour"] = "RED"
        elif roll < 0.2 and isinstance(key, str) and "_" in key:
            head, *rest = key.split("_")  # ProtoJSON's camelCase name: ParseDict takes it
            parent[head + "".join(w.title() for w in rest)] = parent.pop(key)
        else:
            parent[key] = copy.deepcopy(rng.choice(_WRONG_VALUES))
        try:
            ref: Message | None = json_format.ParseDict(d, msg_cls())
        except (json_format.ParseError, TypeError, ValueError, AttributeError) as exc:
            ref, ref_error = None, str(exc)
        try:
            fast = wire.parse(d, msg_cls)
        except wire.WireError as exc:
            assert ref is None, f"{path}: refused only by the fast path: {exc}"
            assert str(exc) == f"cannot read {msg_cls.DESCRIPTOR.name}: {ref_error}"
            outcomes["refused"] += 1
            continue
        if ref is not None:
            assert fast == ref, path
            outcomes["equal"] += 1
        else:
            assert _KNOWN_LOOSENESS.search(ref_error), f"{path}: {ref_error}"
            outcomes["loose"] += 1
    assert min(outcomes.values()) > 20, outcomes


def test_messages_outside_the_fast_path_use_json_format() -> None:
    """Doubles, bytes and oneofs are left to json_format, so results stay the reference."""
    entry = ladder_pb2.LeaderboardEntry(rating=1500.1)
    assert message_to_dict(entry) == reference_message_to_dict(entry)
    chunk = ladder_pb2.ReplayChunk(data=b"\x00\xff", total_size=2)
    assert message_to_dict(chunk) == reference_message_to_dict(chunk)
    assert message_to_dict(chunk)["data"] == "AP8="  # ProtoJSON's base64
    assert dict_to_message({"data": "AP8=", "total_size": 2}, ladder_pb2.ReplayChunk) == chunk
    with pytest.raises(json_format.ParseError, match="multiple"):
        dict_to_message({"action": {"stash": {}}, "fault": "x"}, game_pb2.RecordEntry)


def test_one_converter_serves_the_engine_the_sdk_and_the_bench() -> None:
    assert digdown.bot.lazy_message_to_dict is proto_codec.lazy_message_to_dict
    assert wire.dict_to_message is proto_codec.dict_to_message


# --- the SDK's lazy observation ------------------------------------------------------

_DICT_USES: dict[str, Any] = {
    "equal": lambda d, e: d == e and e == d and not (d != e),  # noqa: SIM202
    "key order": lambda d, e: list(d) == list(e) and list(d.keys()) == list(e.keys()),
    "items and values": lambda d, e: (
        list(d.items()) == list(e.items()) and list(d.values()) == list(e.values())
    ),
    "length": lambda d, e: len(d) == len(e) and bool(d),
    "printing": lambda d, e: repr(d) == repr(e) and str(d) == str(e),
    "a costly key": lambda d, e: d["players"] == e["players"],
    "an optional key": lambda d, e: (
        ("resolution" in d) == ("resolution" in e) and d.get("resolution") == e.get("resolution")
    ),
    "an unknown key": lambda d, e: d.get("nope", 5) == 5 and "nope" not in d,
    "dict()": lambda d, e: dict(d) == e and {**d} == e and (d | {}) == e,
    "copies": lambda d, e: (
        type(copy.copy(d)) is dict
        and copy.deepcopy(d) == e
        and type(copy.deepcopy(d)) is dict
        and d.copy() == e
    ),
    "json": lambda d, e: __import__("json").dumps(d) == __import__("json").dumps(e),
    "pickle": lambda d, e: (lambda p: p == e and type(p) is dict)(
        __import__("pickle").loads(__import__("pickle").dumps(d))
    ),
    "writing": lambda d, e: (d.__setitem__("x", 1), d.pop("x"))[1] == 1 and d == e,
}


@pytest.mark.parametrize("use", sorted(_DICT_USES))
def test_the_lazy_observation_is_the_observation_dict_in_every_use(use: str) -> None:
    """lazy_message_to_dict (what the SDK hands a bot) equals message_to_dict's dict in
    whatever a bot does with it, and is filled in (a FilledDict) by it."""
    seen = 0
    for what, value in _random_game(5):
        if what != "observation":
            continue
        msg = wire.observation_to_proto(value)
        eager = message_to_dict(msg)
        lazy = proto_codec.lazy_message_to_dict(msg)
        assert type(lazy) is proto_codec.LazyDict
        assert _DICT_USES[use](lazy, eager), use
        assert type(lazy) is proto_codec.FilledDict
        assert lazy == eager and list(lazy) == list(eager)
        seen += 1
    assert seen > 20


def test_the_lazy_observation_reads_its_costly_fields_only_when_asked() -> None:
    obs = _observation_with_a_card()
    msg = wire.observation_to_proto(obs)
    lazy = proto_codec.lazy_message_to_dict(msg)
    # The scalars are there from the start and leave it lazy.
    assert (lazy["phase"], lazy["seat"], lazy.get("round")) == (
        obs["phase"],
        obs["seat"],
        obs["round"],
    )
    assert "objectives" in lazy
    assert type(lazy) is proto_codec.LazyDict
    assert lazy["players"][0]["unsecured"] == obs["players"][0]["unsecured"]
    assert type(lazy) is proto_codec.FilledDict
    # Message types without costly fields are read at once, as plain dicts.
    plain = proto_codec.lazy_message_to_dict(game_pb2.Card(id=3, material="DIRT"))
    assert type(plain) is dict


def test_the_sdk_hands_bots_the_lazy_observation() -> None:
    types: list[type] = []
    service = digdown.bot.BotService(lambda obs, legal: types.append(type(obs)) or 0)
    obs = _observation_with_a_card()
    request = bot_pb2.DecisionRequest(
        observation=wire.observation_to_proto(obs),
        legal_actions=[wire.action_to_proto({"kind": "DONE"})] * 2,
    )
    reply = service._decide(request, None)  # type: ignore[arg-type]
    assert reply.action.WhichOneof("kind") == "done"
    assert types == [proto_codec.LazyDict]
