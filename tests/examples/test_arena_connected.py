"""The arena plays a bot that only connects out (``--bot connect:HOST:PORT``): the SDK's
``python -m digdown.connect`` connects to the arena as it would to the ladder, and plays
every game of the run with no fault."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.processes import ROOT, closed_port_address, default_env

pytestmark = pytest.mark.timeout(300)


def test_the_arena_plays_a_connecting_bot(tmp_path: Path) -> None:
    address = closed_port_address()
    arena = subprocess.Popen(
        [sys.executable, "-m", "engine.arena", "--bot", f"connect:{address}", "--vs", "random",
         "--games", "6", "--workers", "1", "--json", "--no-progress", "--connect-wait", "60",
         "--out", str(tmp_path)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=default_env(),
    )  # fmt: skip
    bot = subprocess.Popen(
        [sys.executable, "-m", "digdown.connect", "--connect", address, "--bot", "mine",
         "--log-level", "WARNING"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**default_env(), "DIGDOWN_TOKEN": "arena"},
    )  # fmt: skip
    try:
        out, err = arena.communicate(timeout=240)
    finally:
        bot.terminate()
        bot.wait(20)
    assert arena.returncode == 0, err
    assert "your bot connected to" in err
    report = json.loads(out)
    assert report["games"] == 6
    (lineup,) = report["lineups"]
    assert lineup["faults"] == 0 and lineup["forfeits"] == 0, lineup
