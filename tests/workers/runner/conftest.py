"""Real processes on loopback for the runner tests: bots (the engine is tests/workers/conftest.py).

How they are started, waited on and stopped is tests/support/processes.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import Proc, start_bot


@pytest.fixture(scope="session")
def random_bots(procdir: Path) -> Iterator[list[Proc]]:
    """Three well-behaved random bots (each serves any number of games)."""
    bots = [
        start_bot("examples.random_bot", procdir, f"random{i}", "--seed", str(i)) for i in range(3)
    ]
    yield bots
    for b in bots:
        b.stop()
