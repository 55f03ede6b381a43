"""Balance of the rulesets, measured with the engine's own players (rules §10-§11).

    .venv/bin/python bench/balance.py [--games 400] [--rulesets dd-1,dd-2] \
        [--seats 2,3,4] [--difficulties normal,hard] [--workers 2] \
        [--out docs/balance.md] [--json balance.json]

Not a test: a ruleset is judged by how bots fare in it, and that takes
thousands of games. Per cell (ruleset x seats x difficulty) it plays, on the
same seeds 0..games-1, with the line-up rotating one seat per game:

- every seat the default heuristic: games won, exploration turns, seat bias
  (highest minus lowest seat's rank-1 share), and the heuristic's own rank-1
  share, which is the **fair share** of a seat among equals (1/n, or a little
  more when ranks are shared);
- one heuristic seat against random seats: the heuristic's rank-1 share;
- one exploit seat (engine/players/exploits.py) against heuristic seats: its
  rank-1 share over the fair share.

Intervals are 95% Wilson score intervals of a share (for a ratio: the share's
interval over the fair share). An exploit is above target in a cell when even
its interval's low end exceeds 1.0x fair; the targets are those of the dd-2
issue: every exploit at most 1.0x fair, normal games won within 5 points of
dd-1, and the heuristic at least 0.6 of rank 1 against random seats.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tqdm import tqdm

from engine.players import EXPLOITS
from engine.rules import ENGINE_VERSION, RULESETS
from engine.simulate import simulate

Z95 = 1.959964
HEURISTIC = "heuristic"
# Line-ups by name: the bots of seats 0..n-1 (padded with the last), rotated per game.
LINEUPS: dict[str, list[str]] = {
    "all-heuristic": [HEURISTIC],
    "vs-random": [HEURISTIC, "random"],
    **{name: [name, HEURISTIC] for name in EXPLOITS},
}
TARGET_EXPLOIT = 1.0
TARGET_WON_POINTS = 5.0
TARGET_VS_RANDOM = 0.6


@dataclass(frozen=True)
class Job:
    ruleset: str
    seats: int
    difficulty: str
    lineup: str


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (sound near 0 and 1, unlike p +- z*se)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def run_job(job: Job, games: int) -> dict[str, Any]:
    """One line-up in one cell: the counts the tables are made of."""
    summary = simulate(
        games, job.seats, job.difficulty, LINEUPS[job.lineup], seed=0, ruleset=job.ruleset
    )
    bot = LINEUPS[job.lineup][0]
    turns = sorted(summary.turns)
    return {
        "job": job.__dict__,
        "games": summary.games,
        "won": summary.reasons.get("won", 0),
        "turns_mean": sum(turns) / len(turns),
        "turns_p90": turns[min(len(turns) - 1, int(0.9 * len(turns)))],
        "seat_rank1": list(summary.seat_rank1),
        "rank1": summary.bot_rank1[bot],
        "seated": summary.bot_seats[bot],
        "seconds": summary.seconds,
    }


def cell_report(runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The figures of one cell from its line-ups' counts."""
    equal = runs["all-heuristic"]
    n = equal["games"]
    fair = equal["rank1"] / equal["seated"]
    seat_shares = [c / n for c in equal["seat_rank1"]]
    vs_random = runs["vs-random"]
    report: dict[str, Any] = {
        "games": n,
        "won": equal["won"] / n,
        "won_ci": wilson(equal["won"], n),
        "turns_mean": equal["turns_mean"],
        "turns_p90": equal["turns_p90"],
        "seat_bias_points": 100 * (max(seat_shares) - min(seat_shares)),
        "fair_share": fair,
        "vs_random": vs_random["rank1"] / vs_random["seated"],
        "vs_random_ci": wilson(vs_random["rank1"], vs_random["seated"]),
        "exploits": {},
    }
    for name in EXPLOITS:
        run = runs[name]
        low, high = wilson(run["rank1"], run["seated"])
        report["exploits"][name] = {
            "share": run["rank1"] / run["seated"],
            "ratio": run["rank1"] / run["seated"] / fair,
            "ratio_ci": (low / fair, high / fair),
        }
    return report


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _ci(ci: Sequence[float], pct: bool = True) -> str:
    if pct:
        return f"{100 * ci[0]:.0f}-{100 * ci[1]:.0f}"
    return f"{ci[0]:.2f}-{ci[1]:.2f}"


def render(cells: dict[tuple[str, int, str], dict[str, Any]], meta: dict[str, Any]) -> str:
    """The balance tables as markdown."""
    keys = sorted(cells, key=lambda k: (k[0], k[2], k[1]))
    lines = [
        "# Balance of the rulesets",
        "",
        f"Written by `bench/balance.py` ({meta['engine_version']}): {meta['games']} games per "
        f"line-up and cell, seeds 0..{meta['games'] - 1}, the line-up rotating one seat per "
        f"game; {meta['seconds'] / 60:.0f} min on {meta['machine']}. Intervals are 95% Wilson "
        "intervals. Seat bias is the highest minus the lowest seat's rank-1 share among "
        "heuristics; (±x) is one seat's 95% half-width, about what chance alone gives. "
        "The *fair share* is a heuristic seat's rank-1 share among heuristics (1/n, "
        "a little more when ranks are shared); an exploit's figure is its rank-1 share over "
        "that, against heuristic seats.",
        "",
        "## Every seat the heuristic; one heuristic against random seats",
        "",
        "| ruleset | difficulty | seats | won (95% CI) | turns mean (p90) | "
        "seat bias (noise) | fair share | heuristic vs random: rank 1 (95% CI) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for key in keys:
        c = cells[key]
        # One seat's 95% half-width: a bias of about this size is what chance alone gives.
        noise = 100 * Z95 * math.sqrt(c["fair_share"] * (1 - c["fair_share"]) / c["games"])
        lines.append(
            f"| {key[0]} | {key[2]} | {key[1]} | {_pct(c['won'])} ({_ci(c['won_ci'])}) | "
            f"{c['turns_mean']:.1f} ({c['turns_p90']}) | "
            f"{c['seat_bias_points']:.0f} pts (±{noise:.0f}) | "
            f"{c['fair_share']:.3f} | {_pct(c['vs_random'])} ({_ci(c['vs_random_ci'])}) |"
        )
    names = list(EXPLOITS)
    lines += [
        "",
        "## Exploit players against the heuristic: rank-1 share over fair share",
        "",
        "Each cell: ratio (95% CI). **Bold**: above target (the interval lies above 1.0x).",
        "",
        "| ruleset | difficulty | seats | " + " | ".join(names) + " |",
        "|---|---|---|" + "---|" * len(names),
    ]
    above: list[str] = []
    for key in keys:
        row = []
        for name in names:
            e = cells[key]["exploits"][name]
            text = f"{e['ratio']:.2f}x ({_ci(e['ratio_ci'], pct=False)})"
            if e["ratio_ci"][0] > TARGET_EXPLOIT:
                text = f"**{text}**"
                above.append(f"{key[0]} {key[2]} {key[1]} seats: {name} {text}")
            row.append(text)
        lines.append(f"| {key[0]} | {key[2]} | {key[1]} | " + " | ".join(row) + " |")
    lines += ["", "## Against the targets", ""]
    lines += [f"- above 1.0x fair: {a}" for a in above] or ["- no exploit above 1.0x fair"]
    for key in keys:
        if key[0] == "dd-1" or key[2] != "normal" or ("dd-1", key[1], key[2]) not in cells:
            continue
        delta = 100 * (cells[key]["won"] - cells[("dd-1", key[1], key[2])]["won"])
        mark = "" if abs(delta) <= TARGET_WON_POINTS else " (outside 5 points)"
        lines.append(f"- {key[0]} normal {key[1]} seats: games won {delta:+.1f} pts{mark}")
    weak = [k for k in keys if cells[k]["vs_random"] < TARGET_VS_RANDOM]
    lines += [
        f"- heuristic vs random below {TARGET_VS_RANDOM}: {k[0]} {k[2]} {k[1]} seats" for k in weak
    ] or [f"- heuristic vs random at least {TARGET_VS_RANDOM} in every cell"]
    return "\n".join(lines) + "\n"


def machine() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cpus"


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400, help="per line-up and cell")
    parser.add_argument("--rulesets", default="dd-1,dd-2")
    parser.add_argument("--seats", default="2,3,4")
    parser.add_argument("--difficulties", default="normal,hard")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", default="docs/balance.md", help="markdown tables")
    parser.add_argument("--json", default="", help="also write every figure as JSON")
    parser.add_argument(
        "--render", default="", metavar="JSON", help="play nothing: write --out from a --json file"
    )
    args = parser.parse_args(argv)
    args.ruleset_list = _csv(args.rulesets)
    args.seat_list = [int(s) for s in _csv(args.seats)]
    args.difficulty_list = _csv(args.difficulties)
    unknown = [r for r in args.ruleset_list if r not in RULESETS]
    if unknown:
        parser.error(f"unknown ruleset(s) {unknown}; known: {sorted(RULESETS)}")
    if args.games < 1 or args.workers < 1:
        parser.error("--games and --workers must be at least 1")
    return args


def write(text: str, out: str) -> None:
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(text)
    print(text)
    print(f"wrote {out}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.render:
        doc = json.loads(Path(args.render).read_text())
        saved = {(c["cell"][0], c["cell"][1], c["cell"][2]): c for c in doc["cells"]}
        write(render(saved, doc["meta"]), args.out)
        return 0
    jobs = [
        Job(ruleset, seats, difficulty, lineup)
        for ruleset in args.ruleset_list
        for difficulty in args.difficulty_list
        for seats in args.seat_list
        for lineup in LINEUPS
    ]
    start = time.perf_counter()
    runs: dict[tuple[str, int, str], dict[str, dict[str, Any]]] = {}
    games = len(jobs) * args.games
    print(f"{len(jobs)} line-ups x {args.games} games on {args.workers} worker(s)", file=sys.stderr)
    with (
        ProcessPoolExecutor(max_workers=args.workers) as pool,
        tqdm(total=games, unit="game", file=sys.stderr) as bar,
    ):
        futures = {pool.submit(run_job, job, args.games): job for job in jobs}
        for future in as_completed(futures):
            job = futures[future]
            runs.setdefault((job.ruleset, job.seats, job.difficulty), {})[job.lineup] = (
                future.result()
            )
            bar.update(args.games)
    cells = {key: cell_report(lineups) for key, lineups in runs.items()}
    meta = {
        "engine_version": ENGINE_VERSION,
        "games": args.games,
        "seconds": time.perf_counter() - start,
        "machine": machine(),
    }
    if args.json:
        doc = {"meta": meta, "cells": [{"cell": list(k), **v} for k, v in cells.items()]}
        Path(args.json).write_text(json.dumps(doc, indent=1))
    write(render(cells, meta), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
