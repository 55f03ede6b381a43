"""What the arena costs against the bare simulator, in one run (figures, not a test).

    .venv/bin/python bench/arena_bench.py [--games 200] [--json]

The same games both ways: 2 seats, dd-2, normal, the heuristic house bot against
the heuristic house bot. `engine.simulate` plays them in one process with both
players in-process; the arena plays the author's seat as an SDK bot would see it
(the `act` file below wraps the same heuristic player: observations and actions
through the protobuf messages and back, think time measured, faults judged, the
slowest games' replays written), first on one process, then on every core, then
with the author's bot as a real gRPC server on a unix socket (the SDK's server).
Ratios are arena / simulate from this one run, so the same machine load hit both.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from digdown.bot import BotServer, BotService
from engine.arena import ArenaConfig, run_arena
from engine.players import DictActions, HeuristicPlayer
from engine.simulate import simulate

AUTHOR = """
import random

from engine.players import DictActions, HeuristicPlayer

_bot = DictActions(HeuristicPlayer(random.Random(0)))


def act(observation, legal_actions):
    return _bot.act(observation, legal_actions)
"""


def arena_rate(bot: str, games: int, workers: int, replay_dir: str) -> dict[str, Any]:
    config = ArenaConfig(
        bot=bot, lineups=(("heuristic",),), games=games, workers=workers, replay_dir=replay_dir
    )
    started = time.perf_counter()
    rows = list(run_arena(config))
    seconds = time.perf_counter() - started
    return {"games": len(rows), "seconds": seconds, "games_per_s": len(rows) / seconds}


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as tmp:
        bot = Path(tmp) / "author.py"
        bot.write_text(AUTHOR)
        replays = Path(tmp) / "replays"
        replays.mkdir()
        started = time.perf_counter()
        simulate(args.games, 2, "normal", ["heuristic"], ruleset="dd-2")
        sim_s = time.perf_counter() - started
        sim = {"games": args.games, "seconds": sim_s, "games_per_s": args.games / sim_s}
        one = arena_rate(str(bot), args.games, 1, str(replays))
        every = arena_rate(str(bot), args.games, cores, str(replays))
        server = BotServer(
            BotService(DictActions(HeuristicPlayer(random.Random(0)))),
            f"unix:{tmp}/author.sock",
        )
        server.start()
        try:
            remote = arena_rate(f"unix:{tmp}/author.sock", max(20, args.games // 4), 1, "")
        finally:
            server.stop(0.5)
    figures = {
        "cores": cores,
        "load": os.getloadavg()[0],
        "simulate": sim,
        "arena_1_process": one,
        f"arena_{cores}_processes": every,
        "arena_remote_grpc_1_process": remote,
        "ratio_arena_1_process_to_simulate": one["games_per_s"] / sim["games_per_s"],
        "ratio_arena_all_cores_to_simulate": every["games_per_s"] / sim["games_per_s"],
        "ratio_remote_to_simulate": remote["games_per_s"] / sim["games_per_s"],
    }
    if args.json:
        print(json.dumps(figures, sort_keys=True))
        return 0
    print(f"{args.games} games, 2 seats, dd-2, heuristic vs heuristic; load {figures['load']:.2f}")
    print(f"  engine.simulate, 1 process:       {sim['games_per_s']:7.1f} games/s")
    for key, label in (
        ("arena_1_process", "arena, in-process act, 1 process"),
        (f"arena_{cores}_processes", f"arena, in-process act, {cores} procs"),
        ("arena_remote_grpc_1_process", "arena, gRPC bot, 1 process"),
    ):
        rate = figures[key]["games_per_s"]
        print(f"  {label + ':':34s} {rate:7.1f} games/s ({rate / sim['games_per_s']:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
