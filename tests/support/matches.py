"""Matches for the tests of bots written from the docs: the one-match CLI, as authors run it.

`python -m workers.play` against a real engine process; every wait is bounded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from tests.support.processes import ROOT, Proc

PLAY_TIMEOUT_S = 120.0


def needed(what: str, ok: bool) -> None:
    """Skip when a tool is missing on a developer's machine; under CI=true, fail instead."""
    if ok:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is missing (.ci/run installs it)")
    pytest.skip(f"{what} is missing")


def play(engine: Proc, bots: list[str], seed: int, *extra: str) -> dict[str, Any]:
    """One match with the one-match CLI; its --json outcome."""
    run = subprocess.run(
        [sys.executable, "-m", "workers.play", "--engine", engine.address,
         *[a for b in bots for a in ("--bot", b)], "--seed", str(seed), "--json", *extra],
        cwd=ROOT, capture_output=True, text=True, timeout=PLAY_TIMEOUT_S, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    outcome: dict[str, Any] = json.loads(run.stdout)
    return outcome


def rank_firsts(engine: Proc, bot: str, opponent: str, seeds: range) -> int:
    """Matches of `bot` against `opponent` (2 seats, seats alternating) where it ranked 1st."""
    firsts = 0
    for seed in seeds:
        seat = seed % 2
        bots = [bot, opponent] if seat == 0 else [opponent, bot]
        outcome = play(engine, bots, seed)
        assert outcome["faults"] == [], outcome["faults"]
        firsts += outcome["result"]["ranks"][seat] == 1
    return firsts
