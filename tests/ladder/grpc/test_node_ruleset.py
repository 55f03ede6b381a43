"""The Node.js example bot takes its card data from a real Ladder service (GetRuleset)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.matches import needed, play
from tests.support.processes import ROOT, start, start_bot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]
NODE_DIR = ROOT / "examples" / "node"


def test_node_bot_plays_with_the_ladder_s_ruleset(
    ladder_server: Any, ladder_engine: Any, grpc_procdir: Path
) -> None:
    node = shutil.which("node")
    needed("node (Debian package nodejs)", node is not None)
    needed("examples/node/node_modules (npm ci)", (NODE_DIR / "node_modules").is_dir())
    assert node is not None
    # No rules directory to fall back on: the data can only come from the ladder.
    args = [str(NODE_DIR / "bot.js"), "--ladder", ladder_server.address]
    args += ["--rules-dir", str(grpc_procdir / "nowhere")]
    bot = start(args, grpc_procdir, "node-ladder", program=node)
    rand = start_bot("examples.random_bot", grpc_procdir, "node-ladder-random")
    try:
        outcome = play(ladder_engine, [bot.address, rand.address], 4)
    finally:
        rand.stop()
        assert bot.stop() == 0, bot.log()
    assert outcome["faults"] == [] and outcome["decisions"] > 0
    assert outcome["result"]["seats"][0]["faults"] == 0
