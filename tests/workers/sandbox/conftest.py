"""Real sandboxes for the hosted-bot tests: bubblewrap, a real engine, real matches.

Hosted bots here are uploads (a ``.py`` file or a zip, as stored by the ladder)
started by ``workers.sandbox`` and played by ``workers.runner`` against the
engine over gRPC; nothing is mocked. Without bubblewrap the tests skip, except
under ``CI=true`` where that is a failure (CI installs bubblewrap).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import Proc, start_bot
from tests.support.sandbox import require_sandbox
from workers.sandbox import Bundle

HOSTILE = Path(__file__).resolve().parent / "hostile"


@pytest.fixture(scope="session")
def sandbox_ready() -> None:
    require_sandbox()


@pytest.fixture(scope="session")
def remote_random(procdir: Path) -> Iterator[Proc]:
    """The random house bot as a remote bot (a plain process on loopback)."""
    p = start_bot("examples.random_bot", procdir, "remote-random", "--seed", "1")
    yield p
    p.stop()


def hostile_bundle(name: str, **config: Any) -> Bundle:
    """Hostile bot ``name`` as an upload: ``bot.py`` (its script), ``probe.py``, ``config.json``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("bot.py", (HOSTILE / f"{name}.py").read_bytes())
        zf.writestr("probe.py", (HOSTILE / "probe.py").read_bytes())
        zf.writestr("config.json", json.dumps(config))
    return Bundle(f"{name}.zip", buf.getvalue(), "bot.py")


def probes(log: bytes) -> dict[str, str]:
    """``PROBE name: outcome`` lines of a seat's log, by name."""
    out = {}
    for line in log.decode(errors="replace").splitlines():
        if line.startswith("PROBE "):
            name, _, outcome = line[len("PROBE ") :].partition(": ")
            out[name] = outcome
    return out
