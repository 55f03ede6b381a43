"""examples/node: a bot written in Node.js from protos/ alone plays full matches.

`.ci/run` installs Debian's nodejs and npm and runs `npm ci` in examples/node.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.matches import needed, play, rank_firsts
from tests.support.processes import ROOT, Proc, start

NODE_DIR = ROOT / "examples" / "node"

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def node_bot(procdir: Path) -> Iterator[Proc]:
    node = shutil.which("node")
    needed("node (Debian package nodejs)", node is not None)
    needed("examples/node/node_modules (npm ci)", (NODE_DIR / "node_modules").is_dir())
    assert node is not None
    p = start([str(NODE_DIR / "bot.js")], procdir, "node-bot", program=node)
    yield p
    assert p.stop() == 0, p.log()
    assert "SIGTERM: stopping" in p.log()


@pytest.mark.parametrize("protocol", [2, 1])
def test_a_full_four_seat_match_without_faults(
    engine: Proc, node_bot: Proc, random_bots: list[Proc], protocol: int
) -> None:
    """Over one ActStream per seat (protocol 2), and by unary Act when the runner offers 1."""
    extra = ["--verify"] + (["--unary"] if protocol == 1 else [])
    bots = [node_bot.address, *(b.address for b in random_bots)]
    outcome = play(engine, bots, 11, *extra)
    assert [s["protocol_version"] for s in outcome["seats"]] == [protocol] * 4
    assert outcome["faults"] == []
    assert outcome["verified"] is True
    seat = outcome["result"]["seats"][0]
    assert (seat["faults"], outcome["seats"][0]["bot"]) == (0, "node-starter")
    assert outcome["result"]["reason"] in {"won", "last_standing", "cave_exhausted"}
    assert outcome["decisions"] > 0


def test_it_beats_the_random_house_bot(
    engine: Proc, node_bot: Proc, random_bots: list[Proc]
) -> None:
    """Rank 1 in more than half of a fixed set of 2-seat matches (the seeds make it repeatable)."""
    seeds = range(6)
    firsts = rank_firsts(engine, node_bot.address, random_bots[0].address, seeds)
    assert firsts > len(seeds) / 2, f"node bot first in only {firsts} of {len(seeds)}"
