"""The settings reference (docs/settings.md) is the code's, and every variable is read one way."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ladder.settings import reference
from ladder.settings.environment import REGISTRY, Environment

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("ladder", "workers", "engine", "sdk/digdown", "deploy", "telemetry")
# A variable read straight from the environment, outside ladder/settings/.
DIRECT_READ = re.compile(r"""(?:environ\.get|environ\[|getenv)\(?\s*["']((?:LADDER|DIGDOWN)_\w+)""")


def test_the_committed_page_is_the_generated_one() -> None:
    assert reference.PAGE.read_text() == reference.render(), (
        "docs/settings.md is stale: run python -m ladder.settings.reference"
    )


def test_variables_read_outside_django_are_named_where_they_are_read() -> None:
    outside = [v for v in REGISTRY.values() if not v.read_by.startswith("ladder/settings/")]
    assert outside
    for variable in outside:
        assert variable.name in (ROOT / variable.read_by).read_text(), variable


def test_no_variable_is_read_without_being_declared() -> None:
    undeclared = []
    for folder in PRODUCT:
        for path in (ROOT / folder).rglob("*.py"):
            if "settings" in path.relative_to(ROOT).parts[:2] or "_pb2" in path.name:
                continue
            for name in DIRECT_READ.findall(path.read_text()):
                if name not in REGISTRY:
                    undeclared.append(f"{path.relative_to(ROOT)}: {name}")
    assert not undeclared, "read from the environment but not in the reference:\n" + "\n".join(
        undeclared
    )


def test_a_bad_value_names_its_variable() -> None:
    env = Environment("test", {"X_PORT": "eighty", "X_MODE": "fast"})
    with pytest.raises(RuntimeError, match="X_PORT='eighty' is not a valid integer"):
        env.integer("X_PORT", 80, why="a port")
    with pytest.raises(RuntimeError, match="X_MODE must be one of slow, safe"):
        env.choice("X_MODE", "slow", ("slow", "safe"), why="a mode")
    REGISTRY.pop("X_PORT"), REGISTRY.pop("X_MODE")


def test_unset_and_empty_take_the_default() -> None:
    env = Environment("test", {"Y_EMPTY": " ", "Y_FLAG": "yes", "Y_LIST": "a, ,b"})
    assert env.number("Y_EMPTY", 1.5, why="w") == 1.5
    assert env.flag("Y_FLAG", False, why="w") is True
    assert env.items("Y_LIST", why="w") == ["a", "b"]
    assert env.text("Y_UNSET", "d", why="w") == "d"
    for name in ("Y_EMPTY", "Y_FLAG", "Y_LIST", "Y_UNSET"):
        REGISTRY.pop(name)


def test_one_variable_cannot_have_two_meanings() -> None:
    Environment("test", {}).integer("Z_ONE", 1, why="first")
    with pytest.raises(RuntimeError, match="declared twice"):
        Environment("test", {}).integer("Z_ONE", 2, why="second")
    REGISTRY.pop("Z_ONE")
