"""Writes the operator's reference of every environment variable: ``docs/settings.md``.

``python -m ladder.settings.reference`` rewrites the page from the declarations in
``ladder.settings`` (each part's ``Environment``); ``--check`` exits 1 when the
committed page differs, which a test runs, so a variable added, renamed or given a
new default changes the page in the same commit.
"""

from __future__ import annotations

import argparse
import sys
from itertools import groupby
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "settings.md"
HEADER = """\
# Settings: every environment variable

Generated from the code by `python -m ladder.settings.reference` (do not edit by hand;
a test fails when this page and the code disagree). Each variable is read in one place,
the module named in `ladder/settings/` for its part, or the module in "read by" for
the processes that do not run Django. An empty or unset variable takes its default.
"""


def render() -> str:
    import ladder.settings  # noqa: F401  (declares every variable)
    from ladder.settings.environment import REGISTRY

    lines = [HEADER]
    variables = sorted(REGISTRY.values(), key=lambda v: (v.part, v.name))
    for part, group in groupby(variables, key=lambda v: v.part):
        lines += [f"\n## {part[:1].upper()}{part[1:]}\n",
                  "| variable | default | unit | what it is for | read by |",
                  "|---|---|---|---|---|"]  # fmt: skip
        for v in group:
            default = f"`{v.default}`" if v.default and not v.default.startswith("(") else v.default
            why = v.why.replace("|", "\\|")
            lines.append(f"| `{v.name}` | {default or '—'} | {v.unit or '—'} | {why} | "
                         f"`{v.read_by}` |")  # fmt: skip
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/settings.md differs")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if PAGE.read_text() != text:
            print(f"{PAGE} is stale: run python -m ladder.settings.reference", file=sys.stderr)
            return 1
        print(f"{PAGE.name} is up to date")
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
