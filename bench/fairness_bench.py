"""Is a hosted bot charged for its neighbours? Wall time against CPU time, quiet and noisy.

    .venv/bin/python bench/fairness_bench.py [--decisions 60] [--neighbours N] [--json]

Not a test. One hosted bot in the real sandbox does a fixed amount of work per
decision (a loop of the same length every time). Its decisions are asked the
way the runner asks them, around the same ``DecisionClock``, in three phases:
quiet, then with N CPU-bound neighbour processes (default: one per core, at
the seats' own priority, nice 10: another hosted seat spinning), then quiet
again. For each phase: the mean wall time of a decision, its CPU time
(the seat's cgroup or /proc), the time its threads waited for a CPU (scheduler
statistics), and what each clock charges: wall time, or the CPU clock's wall
time without the waits for a CPU (at least the CPU time). Fair means the CPU charge does not
grow with the neighbours while the wall charge does:
``noisy_over_quiet_wall`` > 1, ``noisy_over_quiet_charged_cpu`` ~ 1, and with the
neighbours ``noisy_charged_cpu_over_cpu`` ~ 1 where ``noisy_wall_over_cpu`` is not.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# The runner's grpc I/O as the workers run it (a decision's wait polled by its own thread).
import digdown.game_io  # noqa: E402, F401  # isort: skip
import grpc  # noqa: E402
from tqdm import tqdm  # noqa: E402

from bench.sandbox_bench import requests  # noqa: E402
from digdown.v1 import bot_pb2_grpc  # noqa: E402
from workers.runner import TimeControl  # noqa: E402
from workers.runner.clock import DecisionClock  # noqa: E402
from workers.sandbox import Bundle, SandboxLimits, hosted_seat, sandbox_check  # noqa: E402
from workers.sandbox.cgroups import cgroup_support  # noqa: E402

WORK_LOOPS = 400_000  # about 20-40 ms of one core in CPython
BOT = f"""
from digdown.bot import parse_args, serve

def act(observation, legal):
    total = 0
    for i in range({WORK_LOOPS}):
        total += i * i
    return total % len(legal)

serve(act, listen=parse_args(None, "fixed work").listen, name="fixed-work")
"""
NEIGHBOUR = "import os; os.nice({nice})\nwhile True: pass"


def phase(seat: Any, stub: Any, n: int, label: str) -> dict[str, float]:
    """``n`` decisions: mean wall, CPU, and the charge under each clock (ms)."""
    reqs = requests(50)
    cpu_tc = TimeControl(hosted_clock="cpu")
    rows: list[tuple[float, float, float]] = []
    for i in tqdm(range(n), desc=label, leave=False):
        clock = DecisionClock(seat.cpu_usage, cpu_tc)
        stub.Act(reqs[i % len(reqs)], timeout=60)
        charged_cpu = clock.stop()
        rows.append((clock.wall_s, clock.cpu_s or 0.0, charged_cpu))
    return {
        "n": n,
        "wall_ms": statistics.mean(r[0] for r in rows) * 1e3,
        "cpu_ms": statistics.mean(r[1] for r in rows) * 1e3,
        "charged_wall_ms": statistics.mean(r[0] for r in rows) * 1e3,
        "charged_cpu_ms": statistics.mean(r[2] for r in rows) * 1e3,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--decisions", type=int, default=60, help="per phase")
    p.add_argument("--neighbours", type=int, default=os.cpu_count() or 1)
    p.add_argument("--nice", type=int, default=SandboxLimits().nice, help="of the neighbours")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    reason = sandbox_check()
    if reason:
        print(f"no sandbox on this machine: {reason}", file=sys.stderr)
        return 2
    report: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "resources": cgroup_support().mode,
        "neighbours": args.neighbours,
        "neighbour_nice": args.nice,
        "loadavg_before": os.getloadavg(),
    }
    with hosted_seat(Bundle("bot.py", BOT.encode()), SandboxLimits(start_s=60)) as seat:
        if seat.start_error:
            raise RuntimeError(seat.start_error)
        with grpc.insecure_channel(seat.address) as channel:
            stub = bot_pb2_grpc.BotStub(channel)
            phase(seat, stub, 5, "warm-up")
            quiet = phase(seat, stub, args.decisions, "quiet")
            procs = [
                subprocess.Popen([sys.executable, "-c", NEIGHBOUR.format(nice=args.nice)])
                for _ in range(args.neighbours)
            ]
            try:
                time.sleep(0.5)  # let the scheduler see them
                noisy = phase(seat, stub, args.decisions, f"{args.neighbours} neighbours")
            finally:
                for proc in procs:
                    proc.kill()
                for proc in procs:
                    proc.wait()
            quiet_again = phase(seat, stub, args.decisions, "quiet again")
    report["phases"] = {"quiet": quiet, "noisy": noisy, "quiet_again": quiet_again}
    base = {k: (quiet[k] + quiet_again[k]) / 2 for k in quiet}
    report["ratios"] = {
        "noisy_over_quiet_wall": noisy["wall_ms"] / base["wall_ms"],
        "noisy_over_quiet_cpu": noisy["cpu_ms"] / base["cpu_ms"],
        "noisy_over_quiet_charged_cpu": noisy["charged_cpu_ms"] / base["charged_cpu_ms"],
        # With neighbours: what each clock charges against the work itself (its CPU time).
        "noisy_wall_over_cpu": noisy["wall_ms"] / noisy["cpu_ms"],
        "noisy_charged_cpu_over_cpu": noisy["charged_cpu_ms"] / noisy["cpu_ms"],
    }
    report["loadavg_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    load = f"{report['loadavg_before'][0]:.2f} -> {report['loadavg_after'][0]:.2f}"
    print(f"machine: {report['machine']}, resources {report['resources']}, load (1 min) {load}")
    print("per decision, mean (ms):      wall      cpu   charged(wall)  charged(cpu)")
    for key, row in report["phases"].items():
        print(
            f"  {key:<12} (n={row['n']:>3}) {row['wall_ms']:8.1f} {row['cpu_ms']:8.1f} "
            f"{row['charged_wall_ms']:14.1f} {row['charged_cpu_ms']:13.1f}"
        )
    for key, value in report["ratios"].items():
        print(f"  {key}: {value:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
