"""What the CPU clock charges a hosted bot for each way of spreading its work.

    .venv/bin/python bench/cpu_clock_bench.py [--work 0.2] [--decisions 5] [--json]

Not a test. One hosted bot (``tests/workers/sandbox/hostile/spread.py``) in the
real sandbox (unsafe development mode where bubblewrap cannot run: the same
seat, cgroup and measure) spends ``--work`` seconds of CPU per decision in its
answering thread (``main``), in 4 threads made once (``reused``), in 4 new
threads per decision (``threads``), in 4 child processes per decision
(``procs``), in 4 orphaned grandchildren per decision (``orphans``); or sleeps
that long (``sleep``) or spins on the wall clock that long (``spin``). Its
decisions are asked as the runner asks them, around ``DecisionClock``. For each
pattern, the means per decision and **charged / used** (used: the CPU time; for
``sleep``, the time asked to sleep), with the seat's measure and, beside it, the
measure the clock had before (the waits of the seat's live threads). Run once
with the seat's cgroup (where the worker has one) and once without
(``rlimits`` mode: waits per thread; ``drop`` ends the threads of ``reused``).
The machine's load is whatever else runs: the waits for a CPU are what the
clock must not charge.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# The runner's grpc I/O as the workers run it (a decision's wait polled by its own thread).
import digdown.game_io  # noqa: E402, F401  # isort: skip
from tqdm import tqdm  # noqa: E402

from tests.support import cpu_clock  # noqa: E402
from workers.sandbox import sandbox_check  # noqa: E402
from workers.sandbox.cgroups import cgroup_support  # noqa: E402

NO_CGROUP = "/nonexistent-cgroup"


def run(cgroup: str, patterns: tuple[str, ...], work_s: float, n: int) -> dict:
    config = cpu_clock.seat_config(cgroup)
    support = cgroup_support(config.cgroup)
    total = len(patterns) * (n + 1)
    with (
        tqdm(total=total, desc=support.mode, unit="decision", leave=False) as bar,
        cpu_clock.spread_seat(work_s, config) as seat,
    ):
        rows = cpu_clock.measure(seat, work_s, n, patterns, progress=lambda p: bar.update())
        pinned = list(seat.cpus)
    return {
        "mode": support.mode,
        "sandbox": "unsafe development mode" if config.unsafe_dev_mode else "bubblewrap",
        "pinned_cpus": pinned,
        "rows": [
            {**asdict(r), "ratio": r.ratio, "ratio_live_threads": r.ratio_live_threads}
            for r in rows
        ],
        "table": cpu_clock.table(rows),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--work", type=float, default=0.2, help="CPU (or wall) seconds a decision")
    p.add_argument("--decisions", type=int, default=5, help="decisions per pattern")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    runs = []
    if cgroup_support(cpu_clock.seat_config().cgroup).mode != "rlimits":
        runs.append(run("", cpu_clock.PATTERNS, args.work, args.decisions))
    rlimits_patterns = ("main", "reused", "drop", "threads", "procs", "sleep", "spin")
    runs.append(run(NO_CGROUP, rlimits_patterns, args.work, args.decisions))
    figures = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_1m": os.getloadavg()[0],
            "sandbox": sandbox_check() or "bubblewrap runs",
        },
        "work_s": args.work,
        "decisions": args.decisions,
        "runs": runs,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"machine: {figures['machine']}; {args.work} s a decision, {args.decisions} decisions")
    for r in runs:
        print(f"\nmode {r['mode']} ({r['sandbox']}; pinned to CPUs {r['pinned_cpus']}):")
        print(r["table"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
