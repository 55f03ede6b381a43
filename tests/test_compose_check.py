"""``make compose-check`` where Docker is missing: it says so and exits non-zero (2).

The check itself needs a Docker engine and minutes (docs/operations.md, "The compose
check"); here only its refusal is run, with a PATH that has no docker command and with
a docker command whose engine does not answer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "deploy.compose_check"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_without_docker_it_says_so_and_exits_2(tmp_path: Path) -> None:
    done = run_check({**os.environ, "PATH": str(tmp_path)})
    assert done.returncode == 2
    assert "the docker command is not installed" in done.stderr


def test_without_an_engine_it_says_so_and_exits_2(tmp_path: Path) -> None:
    if shutil.which("docker") is None:
        pytest.skip("no docker command here")
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    done = run_check(env)
    assert done.returncode == 2
    assert "no Docker engine answers" in done.stderr
