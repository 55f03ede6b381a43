"""deploy/probe.sh, the containers' healthchecks, against real servers.

The gRPC probe is one HTTP/2 call written by hand (curl, no interpreter): it is asked
of a real engine (SERVING), of a service the engine does not have, and of a port
nothing listens on. The HTTP probe reads a real metrics server; the file probe the
age of a file with or without the suffix a dbm module adds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import Proc, start_engine
from tests.support.scrape import free_port

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "deploy" / "probe.sh"


def probe(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROBE), *args], capture_output=True, text=True, timeout=30, check=False
    )


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proc]:
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed (the image installs it)")
    port = free_port()
    p = start_engine(tmp_path_factory.mktemp("probe-engine"), "engine", "--metrics-port", str(port))
    p.metrics_port = port  # type: ignore[attr-defined]
    yield p
    p.stop()


def test_grpc_probe_reads_the_health_service(engine: Proc) -> None:
    assert probe("grpc", engine.address, "digdown.v1.Engine", "3").returncode == 0
    unknown = probe("grpc", engine.address, "digdown.v1.Nothing", "3")
    assert unknown.returncode == 1 and "not SERVING" in unknown.stderr
    nobody = probe("grpc", f"127.0.0.1:{free_port()}", "digdown.v1.Engine", "3")
    assert nobody.returncode == 1


def test_http_probe(engine: Proc) -> None:
    host = engine.address.rsplit(":", 1)[0]
    port = engine.metrics_port  # type: ignore[attr-defined]
    deadline = time.monotonic() + 30
    while probe("http", f"http://{host}:{port}/metrics", "2").returncode != 0:
        assert time.monotonic() < deadline, "the engine's metrics never answered the probe"
        time.sleep(0.2)
    nobody = probe("http", f"http://{host}:{free_port()}/", "2")
    assert nobody.returncode == 1 and "no answer" in nobody.stderr


def test_fresh_probe_takes_the_newest_of_the_file_and_its_suffixed_names(tmp_path: Path) -> None:
    schedule = tmp_path / "celerybeat-schedule"
    assert probe("fresh", str(schedule), "60").returncode == 1
    suffixed = tmp_path / "celerybeat-schedule.db"
    suffixed.touch()
    assert probe("fresh", str(schedule), "60").returncode == 0
    old = time.time() - 120
    os.utime(suffixed, (old, old))
    stale = probe("fresh", str(schedule), "60")
    assert stale.returncode == 1 and "s old" in stale.stderr
