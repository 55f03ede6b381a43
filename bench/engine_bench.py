"""Engine throughput in one process: decisions/s and complete games/s.

    .venv/bin/python bench/engine_bench.py [--seconds 5] [--json]
    .venv/bin/pyinstrument bench/engine_bench.py --seconds 5

Not a test: it prints figures with the machine they were measured on, so that
a ladder capacity estimate (games per core per hour) has a source. Three loops,
all on 4-seat normal games with fresh seeds:

- engine: legal_actions + apply of a random legal action, no observation
  built (the rules engine alone);
- random: what `engine.simulate` does with random bots (observation built for
  every choice, forced decisions through apply_forced);
- heuristic: the same with the heuristic bot in every seat.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.rules import GameConfig, new_game
from engine.simulate import play_game


def _engine_only(seed: int, rng: random.Random) -> tuple[int, int]:
    state = new_game(GameConfig(seed=seed, num_seats=4, difficulty="normal"))
    actions = 0
    while not state.is_over:
        legal = state.legal_actions()
        state.apply(legal[rng.randrange(len(legal))])
        actions += 1
    return actions, actions


def _with_bots(seed: int, bot: str) -> tuple[int, int]:
    """The simulator's own game (engine.simulate.play_game): its speed is what is measured."""
    game = play_game(seed, 4, "normal", [bot] * 4)
    return game.actions, game.decisions


def run(kind: str, seconds: float) -> dict[str, Any]:
    """Play whole games until `seconds` have passed; rates over complete games only."""
    rng = random.Random(0)
    games = actions = decisions = 0
    start = time.perf_counter()
    while True:
        if kind == "engine":
            a, d = _engine_only(games, rng)
        else:
            a, d = _with_bots(games, kind)
        games += 1
        actions += a
        decisions += d
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    return {
        "loop": kind,
        "games": games,
        "seconds": round(elapsed, 3),
        "games_per_s": round(games / elapsed, 1),
        "actions_per_s": round(actions / elapsed),
        "decisions_per_s": round(decisions / elapsed),
        "actions_per_game": round(actions / games, 1),
    }


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="engine throughput, one process")
    parser.add_argument("--seconds", type=float, default=5.0, help="per loop")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = [run(kind, args.seconds) for kind in ("engine", "random", "heuristic")]
    if args.json:
        print(json.dumps({"machine": machine(), "results": results}))
        return 0
    m = machine()
    print(
        f"machine: {m['platform']}, {m['processor']}, {m['cpu_count']} cpus, "
        f"{m['implementation']} {m['python']}"
    )
    print("4-seat normal games, one process:")
    for r in results:
        print(
            f"  {r['loop']:<9} {r['games_per_s']:>7.1f} games/s  "
            f"{r['actions_per_s']:>7} actions/s  {r['decisions_per_s']:>7} bot decisions/s  "
            f"({r['actions_per_game']} actions/game, {r['games']} games in {r['seconds']} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
