"""Every ruleset as a JSON document for bots: `python -m engine.ruleset_json --out DIR [--check]`.

A bot needs the card table and the numbers of the game (strengths, damage,
loot, tools, torch costs, capacities, objectives) to turn the observation's
card names into decisions. The document is made generically from the
`Ruleset` dataclass: every field, in field order, nested dataclasses as
objects, tuples as lists, dict keys as strings. A field the rules gain
(a limit, a `dd-2` rule) appears in the document by regeneration alone, with
no change here. docs/rules.md ("The ruleset as data") says what each key means.

The same text is what `Engine.GetRuleset` serves; the files written here are
the bot SDK's copy (`digdown.rulesets`, which the Ladder service serves), and
`make rulesets-check` (part of `make test`) fails when they differ from the code.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import json
import sys
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from engine.rules import RULESETS, Ruleset

FORMAT = "digdown-ruleset/1"


def jsonable(value: Any) -> Any:
    """A dataclass value (and what it holds) as JSON-able data, generically."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return jsonable(value.value)
    if isinstance(value, Mapping):
        return {_key(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((jsonable(v) for v in value), key=repr)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"cannot put {type(value).__name__} {value!r} into a ruleset document")


def _key(key: Any) -> str:
    if isinstance(key, enum.Enum):
        key = key.value
    if not isinstance(key, str | int):
        raise TypeError(f"cannot use {key!r} as a key of a ruleset document")
    return str(key)


def ruleset_document(rules: Ruleset) -> dict[str, Any]:
    """`{"format": "digdown-ruleset/1", <every field of the Ruleset>}`."""
    body = jsonable(rules)
    if "format" in body:
        raise TypeError("a Ruleset field named 'format' would hide the document's format")
    return {"format": FORMAT, **body}


@cache
def ruleset_json(ruleset_id: str) -> str:
    """The document of one ruleset as text (KeyError for an unknown id)."""
    return document_text(ruleset_document(RULESETS[ruleset_id]))


def document_text(doc: dict[str, Any]) -> str:
    """The one text form of a document: one line per key, and per row of a table
    (a list of objects), in field order; short to read and to diff."""
    lines = []
    for key, value in doc.items():
        head = f"  {json.dumps(key)}: "
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            rows = ",\n".join(f"    {_compact(v)}" for v in value)
            lines.append(f"{head}[\n{rows}\n  ]")
        else:
            lines.append(head + _compact(value))
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def expected_files() -> dict[str, str]:
    """File name -> content of every ruleset document."""
    return {f"{rid}.json": ruleset_json(rid) for rid in sorted(RULESETS)}


def stale_files(out: Path) -> list[str]:
    """What differs between `out` and the code: one line per stale, missing or extra file."""
    expected = expected_files()
    problems = []
    for name, text in expected.items():
        path = out / name
        if not path.exists():
            problems.append(f"missing: {path}")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"stale: {path}")
    problems += [f"no such ruleset in the code: {p}" for p in sorted(out.glob("*.json"))
                 if p.name not in expected]  # fmt: skip
    return problems


def write_files(out: Path) -> list[Path]:
    """Write every ruleset document into `out`; drop documents of rulesets that are gone."""
    out.mkdir(parents=True, exist_ok=True)
    expected = expected_files()
    for path in out.glob("*.json"):
        if path.name not in expected:
            path.unlink()
    written = []
    for name, text in expected.items():
        path = out / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m engine.ruleset_json", description=__doc__)
    p.add_argument("--out", type=Path, required=True, help="directory of the <id>.json files")
    p.add_argument("--check", action="store_true", help="only compare; exit 1 when stale")
    args = p.parse_args(argv)
    if args.check:
        problems = stale_files(args.out)
        for line in problems:
            print(f"{line} (run make rulesets)", file=sys.stderr)
        if not problems:
            print(f"rulesets up to date: {', '.join(sorted(RULESETS))}")
        return 1 if problems else 0
    for path in write_files(args.out):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
