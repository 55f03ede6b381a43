"""``bench/ratings_bench.py`` in its quick form: it plays, caches, rates and writes its table.

The full run (8,000 matches) is documented in docs/ratings.md; here a few dozen
matches check that every system is scored on every column and that a rerun
replays the cache instead of playing again.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Every system the bench scores, the old default (Plackett-Luce on openskill's x60 scale) included.
SYSTEMS = ("elo", "plackett-luce", "bradley-terry", "plackett-luce-x60", "trueskill", "ml-refit")


def run(tmp_path: Path) -> tuple[str, dict[str, list[dict[str, object]]]]:
    out, js = tmp_path / "table.md", tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "ratings_bench.py"), "--matches", "64",
         "--refit", "32", "--workers", "1", "--seed", "7", "--out", str(out), "--json", str(js)],
        capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    return proc.stderr, json.loads(js.read_text())


def test_quick_ratings_bench_scores_every_system(tmp_path: Path) -> None:
    _, figures = run(tmp_path)
    sections = [k for k in figures if k != "meta"]
    assert len(sections) == 2
    for section in sections:
        rows = {r["system"]: r for r in figures[section]}
        assert set(rows) == set(SYSTEMS)
        for r in rows.values():
            assert 0 < r["rank1_logloss"] < 5 and 0 <= r["pair_accuracy"] <= 1
            assert r["games_to_settle_median"] is not None
    table = (tmp_path / "table.md").read_text()
    assert all(f"| {s} |" in table for s in SYSTEMS)
    again, _ = run(tmp_path)
    assert "playing" not in again  # the games came from the cache
