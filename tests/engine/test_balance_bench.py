"""bench/balance.py in a bounded form (the full run is a benchmark, not a test)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_balance_bench_writes_its_tables_and_renders_them_again(tmp_path: Path) -> None:
    out, figures = tmp_path / "balance.md", tmp_path / "balance.json"
    cmd = [sys.executable, "bench/balance.py", "--games", "6", "--seats", "2"]
    cmd += ["--difficulties", "normal", "--workers", "1", "--out", str(out), "--json", str(figures)]
    subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, check=True)
    text = out.read_text()
    doc = json.loads(figures.read_text())
    assert {tuple(c["cell"]) for c in doc["cells"]} == {
        ("dd-1", 2, "normal"),
        ("dd-2", 2, "normal"),
    }
    for cell in doc["cells"]:
        assert cell["games"] == 6
        low, high = cell["won_ci"]
        assert low <= cell["won"] <= high
        for name in ("free-rider", "stasher", "one-torch", "always-return", "first-legal"):
            exploit = cell["exploits"][name]
            assert exploit["ratio"] == exploit["share"] / cell["fair_share"]
            row = f"| {cell['cell'][0]} | normal | 2 |"
            assert row in text
    assert "## Against the targets" in text and "dd-2 normal 2 seats: games won" in text

    again = tmp_path / "again.md"
    cmd = [sys.executable, "bench/balance.py", "--render", str(figures), "--out", str(again)]
    subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    assert again.read_text() == text
