"""The card table and every number of each ruleset, as data: `load("dd-1")`.

The `<id>.json` files beside this module are generated from the rules engine's
`Ruleset` (`make rulesets`; CI fails when they are stale) and are the same text
that `GetRuleset` on the Ladder and Engine services returns. docs/rules.md
("The ruleset as data") says what each key means. A bot reads the ruleset of
its game from `observation["ruleset"]`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from functools import cache
from importlib import resources
from typing import Any

from digdown.v1 import game_pb2


def available() -> list[str]:
    """The ruleset ids this SDK carries, sorted."""
    files = resources.files(__name__).iterdir()
    return sorted(f.name.removesuffix(".json") for f in files if f.name.endswith(".json"))


def text(ruleset: str) -> str:
    """The ruleset document as JSON text (KeyError for an id this SDK does not carry)."""
    if ruleset not in available():
        raise KeyError(
            f"this SDK carries no ruleset {ruleset!r} (it has {', '.join(available())}); "
            "upgrade it, or ask the ladder: Ladder.GetRuleset"
        )
    return resources.files(__name__).joinpath(f"{ruleset}.json").read_text(encoding="utf-8")


@cache
def _load(ruleset: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(text(ruleset))
    return doc


def load(ruleset: str = "dd-1") -> dict[str, Any]:
    """The ruleset document as a dict (a fresh copy: change it freely)."""
    return json.loads(json.dumps(_load(ruleset)))


def ruleset_response(
    requested: str, default: str, document: Callable[[str], str], known: Iterable[str]
) -> game_pb2.GetRulesetResponse:
    """The `GetRulesetResponse` both servers send: `requested` (or `default` when empty).

    `document(id)` gives a ruleset's text. KeyError, with a message that lists the
    known ids, for an unknown one: each server reports it as NOT_FOUND.
    """
    known = sorted(known)
    ruleset = requested.strip() or default
    if ruleset not in known:
        raise KeyError(f"no ruleset {ruleset!r}; known: {', '.join(known)}")
    return game_pb2.GetRulesetResponse(ruleset=ruleset, json=document(ruleset), available=known)
