"""``python -m digdown.healthcheck``, the probe docker-compose runs, against a real engine."""

from __future__ import annotations

import subprocess
import sys

import pytest

from digdown.healthcheck import wait_until_serving
from tests.support.processes import ROOT, closed_port_address

from .conftest import EngineProcess


def healthcheck(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "digdown.healthcheck", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )


def test_serving_engine_exits_0(engine: EngineProcess) -> None:
    for service in ([], ["digdown.v1.Engine"]):
        done = healthcheck(engine.address, *service, "--timeout", "5")
        assert done.returncode == 0, done.stderr
        assert "SERVING" in done.stdout


def test_unknown_service_or_nobody_listening_exits_1(engine: EngineProcess) -> None:
    done = healthcheck(engine.address, "digdown.v1.Nope", "--timeout", "0.5")
    assert done.returncode == 1 and "not serving" in done.stderr
    done = healthcheck(closed_port_address(), "--timeout", "0.5")
    assert done.returncode == 1 and "not serving" in done.stderr


def test_help_exits_0() -> None:
    done = healthcheck("--help")
    assert done.returncode == 0 and "--timeout" in done.stdout


def test_wait_gives_up_at_once_when_the_process_is_gone() -> None:
    with pytest.raises(ChildProcessError, match="stopped before serving"):
        wait_until_serving(closed_port_address(), "digdown.v1.Engine", 30, alive=lambda: False)
    with pytest.raises(TimeoutError, match="not serving within"):
        wait_until_serving(closed_port_address(), "digdown.v1.Engine", 0.3)


def test_serving_and_healthcheck_import_neither_ladder_bots_nor_django() -> None:
    """The engine image's probe and the servers' shared shape must stay engine-only."""
    code = (
        "import sys, digdown.serving, digdown.healthcheck, engine.server\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & {'ladder', 'bots', 'django'})\n"
        "sys.exit(', '.join(bad) or None)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
