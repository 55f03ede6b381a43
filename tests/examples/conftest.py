"""Bots written from the docs alone, played over real gRPC against the house bots.

Each match is `python -m workers.play` (the one-match CLI the docs tell authors to
use) against a real engine process; every process binds port 0 and is stopped
through its own handle.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import ROOT, Proc, start_bot, start_engine

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


@pytest.fixture(scope="module")
def procdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("example-bots")


@pytest.fixture(scope="module")
def engine(procdir: Path) -> Iterator[Proc]:
    p = start_engine(procdir)
    yield p
    p.stop()


@pytest.fixture(scope="module")
def house_random(procdir: Path) -> Iterator[list[Proc]]:
    """Three random house bots (three seeds), enough for a 4-seat match."""
    bots = [start_bot("examples.random_bot", procdir, f"random{i}", "--seed", str(i))
            for i in range(3)]  # fmt: skip
    yield bots
    for b in bots:
        b.stop()
