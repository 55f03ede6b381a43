"""The PettingZoo environment's speed against the simulator's, in one run.

    .venv/bin/python bench/training_bench.py [--seconds 5] [--repeats 3]

Three loops play 4-seat normal games with random players: `engine_bench`'s
"random" loop (the simulator: an observation dict per choice, no encoding),
`engine.training`'s PettingZoo AEC environment (the flat vector and the action
mask per decision, PettingZoo's bookkeeping) and the batched
`DiggingDownVectorEnv` (`--vector` games at once, a random legal action per row
chosen in one numpy operation). Each loop runs `--repeats` times, alternating,
for `--seconds` each; the figures are medians and the ratios are taken between
medians of the same run. `--instructions N` also counts the instructions per
decision of the simulator and the environment over N games each under valgrind
(callgrind), a ratio the machine's load does not move. Not a test: figures, never
asserted. Needs the `train` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
from engine_bench import _callgrind_total, machine
from engine_bench import run as simulator_run

from engine.rules import build_info
from engine.simulate import play_game
from engine.training import DiggingDownEnv, DiggingDownVectorEnv
from engine.training.example import run as example_run


def env_run(seconds: float, seed: int) -> dict[str, Any]:
    """Whole games in the environment with uniformly random legal actions, for `seconds`."""
    env = DiggingDownEnv(num_seats=4, difficulty="normal")
    # The simulator's random bots draw from Python's generator; so does this loop, so that
    # the ratio weighs the environments, not two generators (numpy's costs ~5 us a draw).
    rng = random.Random(seed)
    env.reset(seed=seed)
    games = decisions = 0
    start, cpu = time.perf_counter(), time.process_time()
    while True:
        decisions += env_game(env, rng)
        games += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return {
                "games_per_s": games / elapsed,
                "games_per_cpu_s": games / (time.process_time() - cpu),
                "decisions_per_s": decisions / elapsed,
            }


def env_games(games: int, seed: int) -> int:
    """`env_run`'s loop for a number of games instead of seconds; returns the decisions."""
    env = DiggingDownEnv(num_seats=4, difficulty="normal")
    rng = random.Random(seed)
    env.reset(seed=seed)
    decisions = 0
    for _ in range(games):
        decisions += env_game(env, rng)
    return decisions


def env_game(env: DiggingDownEnv, rng: random.Random) -> int:
    """One game of random legal moves through the AEC API; returns its decisions."""
    env.reset()
    decisions = 0
    for _agent in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        legal = obs["action_mask"].nonzero()[0]
        env.step(int(legal[rng.randrange(len(legal))]))
        decisions += 1
    return decisions


def count_loop(loop: str, games: int) -> int:
    """One loop for `games` games (a child under callgrind); returns its decisions."""
    if loop == "env":
        return env_games(games, seed=0)
    # The simulator loop of engine_bench ("random"): game i is seed i.
    return sum(play_game(g, 4, "normal", ["random"] * 4).decisions for g in range(games))


def instruction_counts(games: int) -> dict[str, Any]:
    """Instructions per decision of the simulator and the environment, by callgrind.

    Each loop runs in a child twice, with no game and with `games` games: the difference
    is what the games cost, start-up and imports cancelled out. Per decision, as both
    play 4-seat games of random players but not the same seeds (the environment draws
    its own); a game's length then weighs nothing.
    """
    if shutil.which("valgrind") is None:
        return {"error": "valgrind is not installed"}
    per_decision: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="training-bench-") as tmp:
        for loop in ("simulator", "env"):
            totals, decisions = [], 0
            for n in (0, games):
                out = str(Path(tmp) / f"{loop}-{n}.out")
                child = subprocess.run(
                    ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                     sys.executable, __file__, "--count-loop", loop, str(n)],
                    env=os.environ, capture_output=True, check=True, text=True, timeout=3600,
                )  # fmt: skip
                totals.append(_callgrind_total(out))
                decisions = int(child.stdout.split()[-1])
            per_decision[loop] = (totals[1] - totals[0]) / decisions
    return {
        "games": games,
        "instructions_per_decision": {k: round(v) for k, v in per_decision.items()},
        "env_over_simulator_instructions": round(
            per_decision["simulator"] / per_decision["env"], 3
        ),
    }


def vector_run(seconds: float, seed: int, num_envs: int) -> dict[str, float]:
    """Batched steps of `num_envs` games with uniformly random legal actions, for `seconds`."""
    venv = DiggingDownVectorEnv(num_envs, num_seats=4, difficulty="normal")
    rng = np.random.default_rng(seed)
    _, mask, _ = venv.reset(seed=seed)
    decisions = 0
    start, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - start < seconds:
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1)
        _, mask, _, _, _ = venv.step(actions)
        decisions += num_envs
    elapsed = time.perf_counter() - start
    return {
        "games_per_s": venv.games_played / elapsed,
        "games_per_cpu_s": venv.games_played / (time.process_time() - cpu),
        "decisions_per_s": decisions / elapsed,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seconds", type=float, default=5.0, help="per loop and repeat")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--vector", type=int, default=64, help="games in the batched environment")
    p.add_argument("--example-games", type=int, default=300, help="of the training example")
    p.add_argument(
        "--instructions",
        type=int,
        default=0,
        metavar="GAMES",
        help="also count instructions per decision under valgrind over GAMES games",
    )
    p.add_argument("--json", action="store_true")
    p.add_argument("--count-loop", nargs=2, help=argparse.SUPPRESS)  # valgrind's child
    args = p.parse_args(argv)
    if args.count_loop:
        print(count_loop(args.count_loop[0], int(args.count_loop[1])))
        return 0
    figures: dict[str, list[dict[str, float]]] = {"simulator": [], "env": [], "vector": []}
    load = [os.getloadavg()[0]]
    for r in range(args.repeats):
        figures["simulator"].append(simulator_run("random", args.seconds))
        figures["env"].append(env_run(args.seconds, seed=r))
        figures["vector"].append(vector_run(args.seconds, seed=r, num_envs=args.vector))
    # The training example as a reader runs it (2 seats, the tabular learner, then random).
    example = example_run(args.example_games, 2, "normal", "tabular", 0)
    load.append(os.getloadavg()[0])
    counted = instruction_counts(args.instructions) if args.instructions else None

    def med(loop: str, key: str) -> float:
        return statistics.median(f[key] for f in figures[loop])

    keys = ("games_per_s", "games_per_cpu_s", "decisions_per_s")
    loops = {loop: {key: round(med(loop, key), 1) for key in keys} for loop in figures}
    ratios = {}
    for loop in ("env", "vector"):
        for clock, key in (("wall", "games_per_s"), ("cpu", "games_per_cpu_s")):
            ratios[f"{loop}_over_simulator_{clock}"] = round(
                med(loop, key) / med("simulator", key), 3
            )
    m = machine()
    if args.json:
        print(json.dumps({"machine": m, "load_average_1m": load, "rules_build": build_info(),
                          "loops": loops, "ratios": ratios, "instructions": counted,
                          "example": {k: example[k] for k in ("games", "games_per_s",
                                                              "seat0_mean_reward")}}))  # fmt: skip
        return 0
    print(
        f"machine: {m['platform']}, {m['cpu_count']} cpus, {m['implementation']} {m['python']}, "
        f"load {load[0]:.2f}..{load[1]:.2f}; rules core: {build_info()['build']} build"
    )
    print(f"4-seat normal, random players, median of {args.repeats} x {args.seconds} s:")
    names = {"simulator": "simulator", "env": "PettingZoo", "vector": f"vector x{args.vector}"}
    for loop, name in names.items():
        f = loops[loop]
        print(
            f"  {name:<12} {f['games_per_s']:7.1f} games/s "
            f"({f['games_per_cpu_s']:.1f} per CPU second, {f['decisions_per_s']:.0f} decisions/s)"
        )
    for loop in ("env", "vector"):
        print(
            f"  ratio {names[loop]} / simulator: {ratios[f'{loop}_over_simulator_wall']:.2f} "
            f"(by CPU time {ratios[f'{loop}_over_simulator_cpu']:.2f})"
        )
    if counted is not None and "error" in counted:
        print(f"instructions: not counted, {counted['error']}")
    elif counted is not None:
        per = counted["instructions_per_decision"]
        print(
            f"  instructions per decision (callgrind, {counted['games']} games): simulator "
            f"{per['simulator']}, PettingZoo {per['env']}: ratio "
            f"{counted['env_over_simulator_instructions']:.2f}"
        )
    print(
        f"training example (2 seats, tabular, {example['games']} games): "
        f"{example['games_per_s']:.1f} games/s, seat 0 mean reward "
        f"{example['seat0_mean_reward']:+.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
