"""The golden playthroughs still play out line for line (see tests/engine/playthrough.py)."""

from __future__ import annotations

import difflib

import pytest

from tests.engine.playthrough import GAMES, GOLDEN, playthrough


@pytest.mark.parametrize("game", GAMES, ids=[g[0] for g in GAMES])
def test_golden_playthrough(game):
    name, seed, seats, difficulty, lineup = game
    expected = (GOLDEN / f"{name}.txt").read_text()
    actual = playthrough(seed, seats, difficulty, lineup)
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), "golden", "now", lineterm="", n=1
        )
        pytest.fail(
            "playthrough changed; if intended, run "
            "`.venv/bin/python -m tests.engine.playthrough --write` and review:\n"
            + "\n".join(list(diff)[:40])
        )
