"""``make bench``'s driver runs the benchmarks it names and writes the report it promises.

Figures are never asserted (they depend on the machine); what is checked is
that the driver still speaks each benchmark's command line and JSON, takes
medians over repeated runs, notes the machine, and says when a benchmark was
skipped or failed. Only the cheap benchmarks run here, in their quick form.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from run_all import BENCHES, flatten, parse_json  # noqa: E402


def test_every_benchmark_script_exists_and_takes_the_arguments_given() -> None:
    for bench in BENCHES:
        script = ROOT / "bench" / bench.script
        assert script.is_file(), bench.script
        for argv in (bench.full, bench.quick):
            options = [a for a in argv if a.startswith("--")] + (["--json"] if bench.json else [])
            text = script.read_text()
            for option in options:
                assert f'"{option}"' in text, f"{bench.script} has no {option}"


def test_figures_are_named_by_their_path() -> None:
    data = {
        "machine": {"cpu_count": 2},
        "results": [{"loop": "random", "games_per_s": 400.5}, {"seats": 4, "per_min": 300}],
        "ok": True,
    }
    assert dict(flatten(data)) == {
        "results.random.games_per_s": 400.5,
        "results.seats=4.seats": 4.0,
        "results.seats=4.per_min": 300.0,
    }
    assert parse_json('building...\n{"a": 1}\n') == {"a": 1}


def test_quick_run_writes_the_report_with_medians_and_the_machine(tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    done = subprocess.run(
        [sys.executable, "bench/run_all.py", "--quick", "--repeats", "2", "--only",
         "engine,training,web", "--database-url", "", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    report = out.read_text()
    assert re.search(r"- machine: .*, \d+ cores, load average at start", report)
    assert re.search(r"- packages: django \d", report)
    engine = report[report.index("## engine") : report.index("## training")]
    assert "2 run(s)" in engine
    row = re.search(
        r"^\| `results\.heuristic\.games_per_s` \| ([\d.,]+) \| ([\d.,]+) - ([\d.,]+) \| 2 \|$",
        engine,
        re.M,
    )
    assert row, engine
    low, median, high = (float(row[i].replace(",", "")) for i in (2, 1, 3))
    assert low <= median <= high
    # Training repeats inside and runs once; its own summary is kept.
    training = report[report.index("## training") : report.index("## web")]
    assert "1 run(s)" in training and "ratio" in training
    assert "Skipped: needs PostgreSQL" in report[report.index("## web") :]
