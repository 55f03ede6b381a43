"""The SDK's TypedDicts and action table say what the wire carries, key for key."""

from __future__ import annotations

import importlib.util
import typing
from pathlib import Path
from types import ModuleType

import pytest

from digdown import types, wire
from digdown.v1 import game_pb2
from engine.rules import ACTION_ARGS, GameConfig, new_game

SHAPES = ["GameConfig", "Card", "Tool", "Passage", "Player", "Resolution", "UnseenCount",
          "Observation", "Event", "SeatResult", "Result"]  # fmt: skip


@pytest.mark.parametrize("name", SHAPES)
def test_typed_dict_keys_are_the_proto_fields(name: str) -> None:
    hints = typing.get_type_hints(getattr(types, name), include_extras=True)
    fields = [f.name for f in getattr(game_pb2, name).DESCRIPTOR.fields]
    assert list(hints) == fields
    optional = {k for k, hint in hints.items() if typing.get_origin(hint) is typing.NotRequired}
    assert optional == getattr(types, name).__optional_keys__


def test_action_table_is_the_engine_s_and_the_proto_s() -> None:
    assert types.ACTION_ARGS == ACTION_ARGS
    oneof = game_pb2.Action.DESCRIPTOR.oneofs_by_name["kind"]
    assert sorted(f.name for f in oneof.fields) == sorted(f for f, _ in wire.ACTION_FIELDS.values())
    for kind, (field, args) in wire.ACTION_FIELDS.items():
        message = game_pb2.Action.DESCRIPTOR.fields_by_name[field].message_type
        assert tuple(f.name for f in message.fields) == args, kind
    assert set(typing.get_type_hints(types.Action)) == {"kind"} | {
        a for args in ACTION_ARGS.values() for a in args
    }


def test_an_observation_has_every_required_key() -> None:
    state = new_game(GameConfig(seed=3, num_seats=3, difficulty="hardcore"))
    obs = wire.observation_from_proto(wire.observation_to_proto(state.observation(0)))
    assert types.Observation.__required_keys__ <= set(obs)
    assert set(obs) <= set(typing.get_type_hints(types.Observation))


# The rules core may not import the SDK, so it declares the same shapes itself
# (engine/rules/shapes.py); engine name -> the SDK's name.
ENGINE_SHAPES = {name: name for name in SHAPES if name != "GameConfig"} | {"Config": "GameConfig"}


def _engine_shapes() -> ModuleType:
    """engine/rules/shapes.py as written: the compiled build's module keeps no generic
    annotations (mypyc erases list[Card] to list), and the declarations are what mypy reads."""
    path = Path(__file__).resolve().parents[2] / "engine" / "rules" / "shapes.py"
    spec = importlib.util.spec_from_file_location("engine_rules_shapes_source", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plain(hint: object) -> str:
    """A type hint written without the module its TypedDicts come from."""
    return str(hint).replace("engine_rules_shapes_source.", "").replace("digdown.types.", "")


@pytest.mark.parametrize("engine_name", sorted(ENGINE_SHAPES))
def test_the_engine_declares_the_sdk_s_shapes(engine_name: str) -> None:
    ours = getattr(_engine_shapes(), engine_name)
    theirs = getattr(types, ENGINE_SHAPES[engine_name])
    our_hints = typing.get_type_hints(ours, include_extras=True)
    their_hints = typing.get_type_hints(theirs, include_extras=True)
    assert sorted(our_hints) == sorted(their_hints)
    assert {k: _plain(h) for k, h in our_hints.items()} == {
        k: _plain(h) for k, h in their_hints.items()
    }
    assert ours.__optional_keys__ == theirs.__optional_keys__
