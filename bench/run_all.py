"""Every benchmark of the project in one run, one markdown report: ``make bench``.

    .venv/bin/python bench/run_all.py [--quick] [--repeats 3] [--out var/bench-report.md]
        [--only engine,grpc] [--database-url postgres://.../bench]

Not a test. Each benchmark is its own script under ``bench/`` with its own
``--help``; this driver runs each one ``--repeats`` times (a fresh process each
time) with ``--json``, and reports every figure as the **median of the runs**
(with the runs' min-max beside it). A ratio is always one each benchmark computed
inside a single run (the same load hit both sides), then the median of those.
The report notes the machine (cores, load, Python, package versions, the
PostgreSQL server) because every figure depends on it.

``--quick`` (about 2 minutes) runs every benchmark on small inputs, to see that
they all work and get rough figures; the full run (under 15 minutes on two
cores) is what a figure in the docs should come from, measured on a quiet
machine. The read and page benchmarks need PostgreSQL (``--database-url`` or
``DATABASE_URL``; a database the benchmark may fill: ``bench/ladder_data.py``
empties its tables first) and are skipped without it. ``bench/balance.py`` (an
hour: thousands of games per cell) is not part of it; it writes docs/balance.md.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from targets import table as targets_table
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "django",
    "djangorestframework",
    "celery",
    "kombu",
    "redis",
    "grpcio",
    "protobuf",
    "psycopg",
    "gunicorn",
    "whitenoise",
    "pettingzoo",
    "playwright",
)


@dataclass
class Bench:
    """One benchmark script and its arguments, full and quick."""

    key: str
    script: str
    what: str
    full: list[str]
    quick: list[str]
    needs_pg: bool = False
    json: bool = True
    # Runs of its own: a benchmark that already repeats inside (and reports medians) runs once.
    runs: int = 0
    timeout_s: float = 600.0
    env: dict[str, str] = field(default_factory=dict)


# The quick runs' data set of the read and page benchmarks (built once for all three).
SMALL = ["--bots", "8000", "--matches", "8000"]

BENCHES = [
    Bench(
        "engine",
        "engine_bench.py",
        "rules core against a naive reference and its pure build (recorded games replayed); "
        "decisions/s and games/s (4 seats, normal)",
        ["--seconds", "5"],
        ["--seconds", "0.5", "--games", "10", "--repeats", "1"],
    ),
    Bench(
        "grpc",
        "grpc_bench.py",
        "per-decision cost over gRPC against in-process play and the bare-gRPC floor",
        ["--games", "20"],
        ["--games", "2", "--echo-calls", "300"],
    ),
    Bench(
        "workers",
        "workers_bench.py",
        "matches per minute through Celery workers (-c 1, -c 2) against the runner alone",
        ["--matches", "32", "--rounds", "4", "--broker", "redis"],
        ["--matches", "6", "--rounds", "2", "--broker", "embedded"],
        timeout_s=900,
    ),
    Bench(
        "sandbox",
        "sandbox_bench.py",
        "hosted-bot start-up per seat and a decision in the sandbox vs outside",
        ["--starts", "10", "--decisions", "1000"],
        ["--starts", "3", "--decisions", "200"],
    ),
    Bench(
        "fairness",
        "fairness_bench.py",
        "a hosted bot's decisions with CPU-bound neighbours: wall time vs the CPU clock's charge",
        ["--decisions", "100", "--nice", "0"],
        ["--decisions", "15", "--nice", "0"],
    ),
    Bench(
        "cpu_clock",
        "cpu_clock_bench.py",
        "the CPU clock's charged / used CPU per way of spreading work (threads, processes...)",
        ["--decisions", "5"],
        ["--decisions", "2"],
    ),
    Bench(
        "connect",
        "connect_bench.py",
        "latency a connected bot adds per decision against a dialled and a hosted bot",
        ["--decisions", "2000"],
        ["--decisions", "200"],
    ),
    Bench(
        "play_streams",
        "play_streams_bench.py",
        "idle Play streams one grpcserver holds: threads, memory per stream, unary p50/p95",
        ["--levels", "0,1000,10000", "--calls", "200"],
        ["--levels", "0,200", "--calls", "50"],
        timeout_s=1800,
    ),
    Bench(
        "security",
        "security_bench.py",
        "what the defences cost: health under load, upload validation, limited logins",
        ["--load", "200", "--seconds", "5"],
        ["--load", "40", "--seconds", "1"],
    ),
    Bench(
        "viewer",
        "viewer_bench.py",
        "replay size per game, timeline build and serving (replay-timeline latency)",
        ["--games", "5"],
        ["--games", "1"],
    ),
    Bench(
        "arena",
        "arena_bench.py",
        "the arena (an author's bot in a seat) against engine.simulate, same games",
        ["--games", "200"],
        ["--games", "40"],
    ),
    Bench(
        "training",
        "training_bench.py",
        "the PettingZoo environment against the simulator",
        ["--seconds", "3", "--repeats", "3"],
        ["--seconds", "0.5", "--repeats", "1"],
        runs=1,
    ),
    Bench(
        "ladder_reads",
        "ladder_reads.py",
        "REST and gRPC read latency (p50/p95) with 10,000 bots and 200,000 matches",
        ["--rounds", "50"],
        # Its deepest page (leaderboard and bot list page 150) needs 7,500 bots; the page
        # benchmark asks the same size, so the data set is built once for both.
        ["--bots", "8000", "--matches", "8000", "--rounds", "10"],
        needs_pg=True,
        timeout_s=900,
    ),
    Bench(
        "web",
        "web_bench.py",
        "page latency (leaderboard, bot, match...) with 10,000 bots and 200,000 matches",
        ["--requests", "20"],
        ["--bots", "8000", "--matches", "8000", "--requests", "5"],
        needs_pg=True,
        timeout_s=900,
    ),
    Bench(
        "table_reads",
        "table_reads.py",
        "a bot's deep match page and a finished season's last page in the database: "
        "execution time and pages touched, the old query shape against the new",
        ["--rounds", "30"],
        ["--bots", "8000", "--matches", "8000", "--rounds", "5"],
        needs_pg=True,
        timeout_s=900,
    ),
    Bench(
        "competition_reads",
        "competition_reads.py",
        "competition list, detail, entries (first and deep page), GetCompetition and its "
        "web page: a 2,000-entrant competition on 10,000 bots and 200,000 matches",
        ["--rounds", "50"],
        ["--bots", "8000", "--matches", "8000", "--entrants", "200", "--rounds", "5"],
        needs_pg=True,
        timeout_s=900,
    ),
    Bench(
        "competition_final",
        "competition_final_bench.py",
        "a final between bots of known strength, every format: games played, places "
        "settled, whether the order found is the true one",
        ["--bots", "16"],
        ["--bots", "6", "--format", "round_robin", "--max-games", "300", "--resamples", "50"],
        runs=1,
        timeout_s=1800,
    ),
    Bench(
        "load",
        "load_bench.py",
        "leaderboard, bot, match and replay-timeline latency (p50/p95/p99) under a bounded "
        "load: gunicorn on loopback, 8 closed-loop clients, 10,000 bots, 200,000 matches; "
        "then every page and read alone (one client), page cache off and on",
        ["--clients", "8", "--seconds", "15", "--one-client", "20"],
        [*SMALL, "--clients", "4", "--seconds", "3", "--one-client", "3"],
        needs_pg=True,
        timeout_s=1500,
    ),
]


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/run_all.py", description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="small inputs: about 2 minutes")
    p.add_argument("--repeats", type=int, default=0, help="runs per benchmark (3; quick: 1)")
    p.add_argument("--out", type=Path, default=ROOT / "var" / "bench-report.md")
    p.add_argument(
        "--only", default="", help="comma list of keys: " + ",".join(b.key for b in BENCHES)
    )
    p.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", ""),
        help="PostgreSQL for the read and page benchmarks (default: DATABASE_URL)",
    )
    return p.parse_args(argv)


# --- figures ------------------------------------------------------------------------------


def label(item: dict[str, Any], index: int) -> str:
    """A list entry's name in a figure's path: its first text field, its seats, or its index."""
    for value in item.values():
        if isinstance(value, str):
            return value
    if isinstance(item.get("seats"), int):
        return f"seats={item['seats']}"
    return str(index)


def flatten(data: Any, path: str = "") -> Iterator[tuple[str, float]]:
    """Every number in a benchmark's JSON, by its path (``results.random.games_per_s``)."""
    if isinstance(data, bool):
        return
    if isinstance(data, int | float):
        yield path, float(data)
    elif isinstance(data, dict):
        for key, value in data.items():
            if key == "machine":
                continue
            yield from flatten(value, f"{path}.{key}" if path else str(key))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            name = label(value, i) if isinstance(value, dict) else str(i)
            yield from flatten(value, f"{path}.{name}" if path else name)


def parse_json(stdout: str) -> Any:
    """The JSON a benchmark printed (some print a line or two before it)."""
    start = min((i for i in (stdout.find("{"), stdout.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise ValueError("no JSON in the output")
    return json.loads(stdout[start:])


def fmt(value: float) -> str:
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.4g}"


@dataclass
class Outcome:
    bench: Bench
    runs: list[dict[str, float]] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    error: str = ""
    skipped: str = ""

    def table(self) -> list[str]:
        keys: list[str] = []
        for run in self.runs:
            keys += [k for k in run if k not in keys]
        rows = ["| figure | median | min - max | runs |", "|---|---:|---:|---:|"]
        for key in keys:
            values = [run[key] for run in self.runs if key in run]
            spread = f"{fmt(min(values))} - {fmt(max(values))}" if len(values) > 1 else ""
            rows.append(
                f"| `{key}` | {fmt(statistics.median(values))} | {spread} | {len(values)} |"
            )
        return rows


def run_one(bench: Bench, args: argparse.Namespace, env: dict[str, str]) -> tuple[str, float]:
    argv = [sys.executable, str(ROOT / "bench" / bench.script)]
    argv += bench.quick if args.quick else bench.full
    if bench.json:
        argv.append("--json")
    started = time.monotonic()
    done = subprocess.run(
        argv,
        cwd=ROOT,
        env={**env, **bench.env},
        capture_output=True,
        text=True,
        timeout=bench.timeout_s,
        check=False,
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout)[-1500:]
        raise RuntimeError(f"exit {done.returncode}: {tail}")
    return done.stdout, time.monotonic() - started


# --- the machine --------------------------------------------------------------------------


def machine(database_url: str) -> list[str]:
    versions = []
    for name in PACKAGES:
        try:
            versions.append(f"{name} {importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = [
        f"- machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
        f"{os.cpu_count()} cores, load average at start {load}",
        f"- Python {platform.python_version()} ({platform.python_implementation()})",
        f"- packages: {', '.join(versions)}",
    ]
    lines.append(f"- rules core: {rules_build()}")
    if database_url:
        lines.append(f"- PostgreSQL: {postgres_version(database_url)}")
    return lines


def rules_build() -> str:
    """Which build of the rules core the benchmarks run, warning loudly when it is stale."""
    probe = (
        "import json; from engine.rules import build_info, build_warning; "
        "print(json.dumps([build_info()['build'], build_warning()]))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60
    )
    if out.returncode:
        return f"unknown ({out.stderr.strip().splitlines()[-1:]})"
    build, warning = json.loads(out.stdout)
    if warning:
        print(f"WARNING: {warning}", file=sys.stderr)
        return f"{build} build; {warning}"
    return f"{build} build"


def postgres_version(url: str) -> str:
    try:
        import psycopg

        with psycopg.connect(url, connect_timeout=5) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            return str(row[0]) if row else "?"
    except Exception as exc:  # a figure source, not a failure
        return f"unknown ({exc.__class__.__name__})"


# --- the run ------------------------------------------------------------------------------


def report(outcomes: list[Outcome], args: argparse.Namespace, header: list[str]) -> str:
    mode = "quick (small inputs: rough figures)" if args.quick else "full"
    lines = [
        "# Benchmark report",
        "",
        f"`bench/run_all.py`, {mode}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        "every figure is the median of the runs (min - max beside it); ratios are computed "
        "inside one run, then their median. docs/benchmarks.md says what each one measures.",
        "",
        *header,
        f"- load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}",
        "",
        "## Targets",
        "",
        "Each speed target against this run (the worst matching figure counts).",
        "",
        *targets_table({o.bench.key: o.runs for o in outcomes}, fmt),
        "",
    ]
    for out in outcomes:
        b = out.bench
        argv = " ".join(b.quick if args.quick else b.full)
        lines += [f"## {b.key}: {b.what}", "", f"`bench/{b.script} {argv}`", ""]
        if out.skipped:
            lines += [f"Skipped: {out.skipped}.", ""]
            continue
        if out.error:
            lines += ["Failed:", "", "```", out.error.strip(), "```", ""]
        if out.seconds:
            took = statistics.median(out.seconds)
            lines += [f"{len(out.seconds)} run(s), {took:.0f} s each (median).", ""]
        if out.runs:
            lines += [*out.table(), ""]
        for text in out.texts[-1:]:
            lines += ["Its own summary (last run):", "", "```", text.strip()[-4000:], "```", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    repeats = args.repeats or (1 if args.quick else 3)
    only = {k.strip() for k in args.only.split(",") if k.strip()}
    benches = [b for b in BENCHES if not only or b.key in only]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    env.pop("DATABASE_URL", None)  # each benchmark makes its own database unless told
    pg = args.database_url if args.database_url.startswith("postgres") else ""
    outcomes = [Outcome(b) for b in benches]
    jobs = []
    for out in outcomes:
        if out.bench.needs_pg and not pg:
            out.skipped = "needs PostgreSQL (--database-url or DATABASE_URL)"
            continue
        jobs += [out] * (out.bench.runs or repeats)
    header = machine(pg)
    started = time.monotonic()
    with tqdm(total=len(jobs), unit="run", file=sys.stderr) as bar:
        for out in jobs:
            if out.error:
                bar.update(1)
                continue
            bar.set_description(out.bench.key)
            run_env = {**env, "DATABASE_URL": pg} if out.bench.needs_pg else env
            try:
                stdout, seconds = run_one(out.bench, args, run_env)
                out.seconds.append(seconds)
                if out.bench.json:
                    out.runs.append(dict(flatten(parse_json(stdout))))
                else:
                    out.texts.append(stdout)
            except (RuntimeError, ValueError, subprocess.TimeoutExpired) as exc:
                out.error = str(exc)
            bar.update(1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(report(outcomes, args, header) + "\n")
    failed = [o.bench.key for o in outcomes if o.error]
    print(
        f"report: {args.out} ({time.monotonic() - started:.0f} s)"
        + (f"; FAILED: {', '.join(failed)}" if failed else ""),
        file=sys.stderr,
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
