"""Check a replay document against the documented schema (docs/replay-format.schema.json).

Two checks: the document validates, and it has no key the schema does not declare
(the schema itself lets readers ignore unknown keys, as the format promises, so
this second walk is what keeps the writer from growing undocumented keys).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "replay-format.schema.json"


@cache
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())
    Draft202012Validator.check_schema(loaded)
    return loaded


def check(doc: dict[str, Any]) -> None:
    """AssertionError naming every problem: schema errors, then undeclared keys."""
    errors = [f"{list(e.absolute_path)}: {e.message}"
              for e in Draft202012Validator(schema()).iter_errors(doc)]  # fmt: skip
    assert not errors, "replay does not match its schema:\n" + "\n".join(errors[:20])
    undeclared = sorted(set(_undeclared(doc, schema(), "")))
    assert not undeclared, f"keys the schema does not declare: {undeclared}"


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = schema()["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _undeclared(value: Any, node: dict[str, Any], path: str) -> list[str]:
    node = _resolve(node)
    if isinstance(value, list):
        items = node.get("items", {})
        return [k for i, v in enumerate(value) for k in _undeclared(v, items, f"{path}[{i}]")]
    if not isinstance(value, dict):
        return []
    props = node.get("properties", {})
    found = [f"{path}.{k}" for k in value if k not in props]
    for k, v in value.items():
        if k in props:
            found += _undeclared(v, props[k], f"{path}.{k}")
    return found
