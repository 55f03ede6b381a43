"""The compiled rules core (mypyc) and the pure-Python one play every game identically.

`python -m engine.compare_builds --games 3000` is the full check; here a bounded
one. Where no compiled build exists (no C compiler), the comparison is skipped,
except under CI=true on a machine that can compile: there a missing build fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine import compare_builds
from engine.compile_rules import OUT, missing_toolchain
from engine.rules import BUILD, sources_digest

ROOT = Path(__file__).resolve().parents[2]


def _compiled_available() -> bool:
    if (OUT / "BUILD.json").exists() and BUILD == "compiled":
        return True
    if os.environ.get("CI") == "true" and not missing_toolchain():
        pytest.fail("CI can compile the rules core but no current compiled build is loaded")
    return False


def _build_in(env: dict[str, str]) -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-c", "import json, engine.rules as r; print(json.dumps(r.build_info()))"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    info: dict[str, str] = json.loads(out)
    return info


def test_the_pure_build_can_be_forced() -> None:
    env = {**os.environ, "DIGDOWN_ENGINE_BUILD": "pure"}
    assert _build_in(env)["build"] == "pure"


def test_a_compiled_build_runs_only_for_the_sources_it_was_made_from() -> None:
    if not _compiled_available():
        pytest.skip("no compiled build here (python -m engine.compile_rules)")
    built = json.loads((OUT / "BUILD.json").read_text())
    assert built["sources_sha256"] == sources_digest()
    env = {k: v for k, v in os.environ.items() if k != "DIGDOWN_ENGINE_BUILD"}
    assert _build_in(env)["build"] == "compiled"


def test_compiled_and_pure_builds_play_the_same_games(capsys: pytest.CaptureFixture[str]) -> None:
    if not _compiled_available():
        pytest.skip("no compiled build here (python -m engine.compile_rules)")
    games = len(compare_builds.SETUPS) * 4  # every setup four times
    assert compare_builds.main(["--games", str(games)]) == 0, capsys.readouterr().out


def test_a_stale_compiled_build_is_reported_not_silently_replaced(tmp_path: Path) -> None:
    """An edit under engine/rules makes the build stale: the pure one runs and says why."""
    if not _compiled_available():
        pytest.skip("no compiled build here (python -m engine.compile_rules)")
    shutil.copytree(ROOT / "engine", tmp_path / "engine")
    errors = tmp_path / "engine" / "rules" / "errors.py"
    errors.write_text(errors.read_text() + "\n# an edit after the build\n")
    env = {k: v for k, v in os.environ.items() if k != "DIGDOWN_ENGINE_BUILD"}
    env["PYTHONPATH"] = str(tmp_path)
    probe = (
        "import json, engine.rules as r; "
        "print(json.dumps([r.__file__, r.build_info()['build'], r.build_warning()]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env=env, cwd=tmp_path, capture_output=True, text=True, check=True, timeout=60,
    ).stdout  # fmt: skip
    where, build, warning = json.loads(out)
    assert where.startswith(str(tmp_path))
    assert build == "pure"
    assert "stale" in warning and "make venv" in warning
    simulated = subprocess.run(
        [sys.executable, "-m", "engine.simulate", "--games", "1"],
        env=env, cwd=tmp_path, capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    assert "stale" in simulated.stderr
    assert _build_in({**env, "PYTHONPATH": str(ROOT)})["build"] == "compiled"  # ours untouched
