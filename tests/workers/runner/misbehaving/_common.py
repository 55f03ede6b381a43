"""Shared command line of the misbehaving test bots (on top of digdown.bot.parse_args)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def args(extra: list[tuple[str, type, object]]) -> argparse.Namespace:
    """`--listen`, `--port-file` plus the bot's own options, e.g. [("--after", int, 0)]."""
    p = argparse.ArgumentParser()
    p.add_argument("--listen", default="127.0.0.1:0")
    p.add_argument("--port-file", type=Path)
    for flag, typ, default in extra:
        p.add_argument(flag, type=typ, default=default)
    return p.parse_args(sys.argv[1:])


def write_port(path: Path, port: int) -> None:
    """Atomically: a reader never sees an empty or half-written port file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"{port}\n")
    tmp.replace(path)
