"""The ruleset as data: generated generically from `Ruleset`, the same text everywhere."""

from __future__ import annotations

import dataclasses
import enum
import json
import re
from pathlib import Path

import grpc
import pytest

from digdown import rulesets
from digdown.v1 import game_pb2
from engine.rules import DD1, RULESETS
from engine.ruleset_json import (
    FORMAT,
    document_text,
    ruleset_document,
    ruleset_json,
    stale_files,
    write_files,
)

from .conftest import CALL_TIMEOUT, EngineProcess

ROOT = Path(__file__).resolve().parents[3]


def test_every_field_of_the_ruleset_is_in_the_document() -> None:
    doc = json.loads(ruleset_json("dd-1"))
    fields = [f.name for f in dataclasses.fields(DD1)]
    assert list(doc) == ["format", *fields]
    assert doc["format"] == FORMAT and doc["id"] == "dd-1"
    assert sum(row["count"] for row in doc["cave"]) == 50
    warden = next(row for row in doc["cave"] if row["name"] == "Warden")
    assert (warden["tool"], warden["strength"], warden["damage"]) == ("SWORD", 10, 4)
    assert doc["capacity"] == {"2": 8, "3": 6, "4": 6}
    assert doc["recipes"][2]["cost"] == [["DIAMOND", 1], ["IRON", 1]]
    assert json.loads(document_text(doc)) == doc


class Colour(enum.Enum):
    RED = "RED"


def test_a_field_the_rules_gain_flows_through_without_code_changes() -> None:
    """The generator knows no field by name: a new one (a limit, a dd-2 rule) just appears."""
    # DD1's fields then new ones (not a subclass: the compiled Ruleset is a C type)
    Grown = dataclasses.make_dataclass(
        "Grown",
        [(f.name, f.type) for f in dataclasses.fields(DD1)]
        + [("rider_pays", int, dataclasses.field(default=1)),
           ("caps", dict, dataclasses.field(default_factory=lambda: {2: (1, 2)})),
           ("names", frozenset, dataclasses.field(default=frozenset({"b", "a"}))),
           ("colour", Colour, dataclasses.field(default=Colour.RED))],
        frozen=True, eq=False,
    )  # fmt: skip
    grown = Grown(**{f.name: getattr(DD1, f.name) for f in dataclasses.fields(DD1)})
    doc = ruleset_document(grown)
    assert (doc["rider_pays"], doc["caps"], doc["names"], doc["colour"]) == (
        1, {"2": [1, 2]}, ["a", "b"], "RED"
    )  # fmt: skip
    assert {k: v for k, v in doc.items() if k in json.loads(ruleset_json("dd-1"))} == json.loads(
        ruleset_json("dd-1")
    )


def test_unconvertible_values_are_refused() -> None:
    Odd = dataclasses.make_dataclass("Odd", [("when", object)])
    with pytest.raises(TypeError, match="cannot put"):
        ruleset_document(Odd(when=object()))  # type: ignore[arg-type]


def test_the_sdk_copy_is_current_and_the_check_sees_drift(tmp_path: Path) -> None:
    assert stale_files(ROOT / "sdk" / "digdown" / "rulesets") == []
    assert rulesets.available() == sorted(RULESETS)
    assert rulesets.text("dd-1") == ruleset_json("dd-1")
    assert rulesets.load("dd-1") == json.loads(ruleset_json("dd-1"))
    write_files(tmp_path)
    assert stale_files(tmp_path) == []
    (tmp_path / "dd-1.json").write_text("{}")
    (tmp_path / "dd-9.json").write_text("{}")
    assert [re.sub(r":.*", "", p) for p in stale_files(tmp_path)] == [
        "stale",
        "no such ruleset in the code",
    ]
    with pytest.raises(KeyError, match=r"Ladder\.GetRuleset"):
        rulesets.text("dd-9")


def test_every_key_is_explained_in_docs_rules() -> None:
    """docs/rules.md names every key of the document (a new field needs its line there)."""
    section = (ROOT / "docs" / "rules.md").read_text().split("## 12. The ruleset as data")[1]
    for rid in RULESETS:
        missing = [k for k in json.loads(ruleset_json(rid)) if f"`{k}`" not in section]
        assert not missing, f"docs/rules.md §12 does not explain {missing} of {rid}"


def test_engine_serves_the_same_text(engine: EngineProcess) -> None:
    reply = engine.stub.GetRuleset(game_pb2.GetRulesetRequest(), timeout=CALL_TIMEOUT)
    assert (reply.ruleset, list(reply.available)) == ("dd-1", sorted(RULESETS))
    assert reply.json == rulesets.text("dd-1")
    named = engine.stub.GetRuleset(game_pb2.GetRulesetRequest(ruleset="dd-1"), timeout=CALL_TIMEOUT)
    assert named.json == reply.json
    with pytest.raises(grpc.RpcError) as info:
        engine.stub.GetRuleset(game_pb2.GetRulesetRequest(ruleset="nope"), timeout=CALL_TIMEOUT)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    assert "known: dd-1" in (info.value.details() or "")
