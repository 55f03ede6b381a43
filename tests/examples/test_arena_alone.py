"""The arena runs in an author's venv: `pip install ./sdk ./engine` and nothing of the ladder.

A fresh virtualenv gets the SDK and the engine's own distribution (engine/pyproject.toml)
from copies of the repository; neither Django, Celery nor psycopg may come with them.
The starter bot, copied out as an author would, then plays 200 arena games there
(100 against each house bot) and the report carries its intervals.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.examples.test_sdk_alone import INSTALL_TIMEOUT_S, clean_env, installed
from tests.support.processes import ROOT

pytestmark = pytest.mark.timeout(900)
LADDER = ("django", "celery", "psycopg", "rest_framework", "redis", "ladder", "workers")


@pytest.fixture(scope="module")
def engine_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("engine-alone")
    skip = shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.so")
    for part in ("sdk", "engine"):
        shutil.copytree(ROOT / part, tmp / part, ignore=skip)
    subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True, timeout=120)
    python = tmp / "venv" / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "./sdk", "./engine"],
        cwd=tmp, env=clean_env(), capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    return python


def test_only_the_sdk_the_engine_and_their_few_dependencies(engine_python: Path) -> None:
    names = installed(engine_python)
    allowed = {"digdown-sdk", "digdown-engine", "grpcio", "grpcio-health-checking",
               "protobuf", "tqdm", "typing-extensions"}  # fmt: skip
    assert names <= allowed, names - allowed
    probe = f"import importlib.util as u; print([m for m in {LADDER!r} if u.find_spec(m)])"
    run = subprocess.run(
        [str(engine_python), "-c", probe], cwd=engine_python.parents[2], env=clean_env(),
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert run.stdout.strip() == "[]"


def test_two_hundred_arena_games_of_an_sdk_only_bot(engine_python: Path, tmp_path: Path) -> None:
    shutil.copy(ROOT / "examples" / "starter_bot.py", tmp_path / "mybot.py")
    run = subprocess.run(
        [str(engine_python), "-m", "engine.arena", "--bot", "mybot.py", "--vs", "random",
         "--vs", "heuristic", "--games", "100", "--workers", "2", "--json", "--out", "kept"],
        cwd=tmp_path, env=clean_env(), capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["games"] == 200
    vs_random, vs_heuristic = report["lineups"]
    assert vs_random["opponents"] == ["random"] and vs_heuristic["opponents"] == ["heuristic"]
    for line in (vs_random, vs_heuristic):
        assert line["games"] == 100 and line["faults"] == 0
        assert 0 <= line["rank1_low"] <= line["rank1"] <= line["rank1_high"] <= 1
        assert line["mean_rank_low"] <= line["mean_rank"] <= line["mean_rank_high"]
        assert line["think_ms"]["p50"] <= line["think_ms"]["p99"]
    assert vs_random["rank1_low"] > 0.5  # the starter bot beats the random house bot
    assert report["replays"]["slowest"], report["replays"]
    assert all(Path(tmp_path, r["replay"]).is_file() for r in report["replays"]["slowest"])
