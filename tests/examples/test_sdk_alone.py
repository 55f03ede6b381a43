"""The bot SDK installs alone and its starter bot beats the random house bot.

A fresh virtualenv gets `pip install ./sdk` and nothing else (as docs/writing-a-bot.md
says); neither Django, Celery nor psycopg, nor any package of the ladder, may come
with it. The starter bot, copied out of the repository, then runs on that venv's
Python and plays the random house bot with the one-match CLI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.rules import RULESETS
from tests.support.matches import play, rank_firsts
from tests.support.processes import ROOT, Proc, start

pytestmark = pytest.mark.timeout(600)
INSTALL_TIMEOUT_S = 480.0
ABSENT = ("django", "celery", "psycopg", "rest_framework", "redis", "engine", "ladder", "workers")


def clean_env() -> dict[str, str]:
    """This environment without anything that would put the repository or a venv on the path."""
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "DJANGO_SETTINGS_MODULE"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def installed(python: Path) -> set[str]:
    """The distributions pip says are in the venv of ``python`` (normalised names)."""
    freeze = subprocess.run(
        [str(python), "-m", "pip", "freeze"], env=clean_env(),
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return {re.split("==| @ ", line)[0].lower().replace("_", "-")
            for line in freeze.stdout.splitlines()}  # fmt: skip


@pytest.fixture(scope="module")
def sdk_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with `pip install ./sdk` (from a copy, so the repository stays clean)."""
    tmp = tmp_path_factory.mktemp("sdk-alone")
    shutil.copytree(ROOT / "sdk", tmp / "sdk", ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__"))  # fmt: skip
    subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True, timeout=120)
    python = tmp / "venv" / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         str(tmp / "sdk")],
        cwd=tmp, env=clean_env(), capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout + install.stderr
    return python


def test_only_grpc_and_protobuf_come_with_it(sdk_python: Path) -> None:
    probe = (
        "import importlib.util, json, sys\n"
        "import digdown.bot, digdown.rulesets, digdown.types, digdown.v1.ladder_pb2_grpc\n"
        f"absent = {ABSENT!r}\n"
        "print(json.dumps({'present': [m for m in absent if importlib.util.find_spec(m)],\n"
        "                  'rulesets': digdown.rulesets.available()}))\n"
    )
    run = subprocess.run(
        [str(sdk_python), "-c", probe], cwd=sdk_python.parents[2], env=clean_env(),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {"present": [], "rulesets": sorted(RULESETS)}
    names = installed(sdk_python)
    # typing-extensions comes with grpcio itself.
    allowed = {"digdown-sdk", "grpcio", "grpcio-health-checking", "protobuf", "typing-extensions"}
    assert names <= allowed, names - allowed


@pytest.fixture(scope="module")
def starter(sdk_python: Path, procdir: Path) -> Iterator[Proc]:
    script = procdir / "starter_bot.py"
    shutil.copy(ROOT / "examples" / "starter_bot.py", script)
    p = start(
        [str(script)], procdir, "starter", program=str(sdk_python), env=clean_env(),
        health_service="digdown.v1.Bot",
    )  # fmt: skip
    yield p
    assert p.stop() == 0, p.log()


def test_the_starter_bot_beats_the_random_house_bot(
    engine: Proc, starter: Proc, random_bots: list[Proc]
) -> None:
    outcome = play(engine, [starter.address, *(b.address for b in random_bots)], 5)
    assert outcome["faults"] == [] and outcome["seats"][0]["bot"] == "starter"
    seeds = range(6)
    firsts = rank_firsts(engine, starter.address, random_bots[0].address, seeds)
    assert firsts > len(seeds) / 2, f"starter first in only {firsts} of {len(seeds)}"
