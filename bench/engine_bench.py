"""Engine throughput in one process: the rules core against a reference, and games/s.

    .venv/bin/python bench/engine_bench.py [--seconds 5] [--games 100] [--repeats 5] [--json]
    .venv/bin/python bench/engine_bench.py --profile      # cProfile of the replay, top 25

Not a test: it prints figures with the machine they were measured on, so that
a ladder capacity estimate (games per core per hour) has a source.

**Replay** (the rules core's own speed): `--games` games are recorded once
(4-seat normal, the heuristic bot in every seat, as on the ladder), then replayed
entry by entry, `--repeats` times interleaved, by

- `reference`: bench/reference_rules.py, a naive simulator of the same rules
  written to be obviously correct (tests/engine/test_reference_rules.py checks
  it agrees with the engine on every legal list, observation, event and result);
- `engine`: the rules core as this process imports it (the compiled build
  where `make venv` made one; `rules_build` says which);
- `engine_pure`: the same in a child process with `DIGDOWN_ENGINE_BUILD=pure`.

each in two ways: `step` (the legal actions, then the entry applied) and
`observe` (the same plus the acting seat's observation). Figures are steps
(record entries) per second over all the repeats, the loops taking turns on every
record; ratios are taken within this one run: `engine / reference` and
`engine / engine_pure`.
The recorded games are fixtures: they are frozen out of the garbage collector's
sight before any loop runs (`freeze_fixtures`), in every process, for every loop.

**Games** (what the simulator does), three loops on 4-seat normal games with
fresh seeds, for `--seconds` each:

- engine: legal_actions + apply of a random legal action, no observation
  built (the rules engine alone);
- random: what `engine.simulate` does with random bots (observation built for
  every choice, forced decisions through apply_forced);
- heuristic: the same with the heuristic bot in every seat.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import platform
import pstats
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from reference_rules import ReferenceGame

from engine.players import PLAYERS
from engine.rules import GameConfig, build_info, new_game
from engine.rules.record import apply_entry, state_from_record_setup
from engine.simulate import play_game, play_out

Record = dict[str, Any]


def recorded_games(games: int) -> list[Record]:
    """`games` finished 4-seat normal games of the heuristic bot (seeds 0..games-1)."""
    records = []
    for seed in range(games):
        state = new_game(GameConfig(seed=seed, num_seats=4, difficulty="normal"))
        bots = [PLAYERS["heuristic"](random.Random(seed * 8 + s)) for s in range(4)]
        play_out(state, lambda seat, obs, legal, bots=bots: bots[seat].act(obs, legal))
        records.append(state.record)
    return records


def freeze_fixtures() -> None:
    """Put everything alive now (the imports, the recorded games) out of the collector's sight.

    The records are the bench's own fixtures, alive through the whole run: left in view, every
    full collection a loop triggers walks all of them, charging each loop for the bench's
    memory rather than for what the loop itself allocates (a game loop holds one record). Both
    loops run under the same frozen heap; the collector still runs on what they allocate.
    """
    gc.collect()
    gc.freeze()


def engine_replay(record: Record, observe: bool) -> None:
    """Every entry of the record: the legal actions, (the observation,) the entry applied."""
    state = state_from_record_setup(record)
    for entry in record["entries"]:
        state.legal_actions()
        if observe:
            state.observation(state.acting_seat)
        apply_entry(state, entry)


def reference_replay(record: Record, observe: bool) -> None:
    game = ReferenceGame(record)
    for entry in record["entries"]:
        game.legal()
        if observe:
            game.observation(game.acting_seat())
        game.step(entry)


REPLAYS: dict[str, Callable[[Record, bool], None]] = {
    "reference": reference_replay,
    "engine": engine_replay,
}


def interleaved(records: list[Record], repeats: int) -> dict[str, dict[str, float]]:
    """Steps/s of every loop, by wall clock and by this process's CPU time.

    The loops take turns on every record (reference, engine; step, observe), so a
    burst of load from other processes hits them all alike, and CPU time (what this
    process itself spent) is beside the wall clock for a machine shared with others.
    """
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    steps = 0
    for _ in range(repeats):
        for record in records:
            steps += len(record["entries"])
            for name, replay in REPLAYS.items():
                for observe in (False, True):
                    key = f"{name}_{'observe' if observe else 'step'}"
                    w, c = time.perf_counter(), time.process_time()
                    replay(record, observe)
                    wall[key] = wall.get(key, 0.0) + time.perf_counter() - w
                    cpu[key] = cpu.get(key, 0.0) + time.process_time() - c
    return {
        "wall": {key: steps / t for key, t in wall.items()},
        "cpu": {key: steps / max(t, 1e-9) for key, t in cpu.items()},
    }


def replay_rates(records: list[Record], repeats: int, pure_child: bool) -> dict[str, Any]:
    """The interleaved replay here, and (`pure_child`) the same by the pure build in a child.

    The child replays the reference too, so the compiled build is compared with the
    pure one through the reference both ran: (engine / reference) / (pure / reference).
    """
    here = interleaved(records, repeats)
    pure: dict[str, dict[str, float]] = {}
    if pure_child:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"records": records, "repeats": repeats}, f)
        try:
            pure = pure_rates(f.name)
        finally:
            os.unlink(f.name)
    ratios: dict[str, float] = {}
    for clock in ("wall", "cpu"):
        for kind in ("step", "observe"):
            mine = here[clock][f"engine_{kind}"] / here[clock][f"reference_{kind}"]
            ratios[f"engine_vs_reference_{kind}_{clock}"] = mine
            if pure:
                theirs = pure[clock][f"engine_{kind}"] / pure[clock][f"reference_{kind}"]
                ratios[f"pure_vs_reference_{kind}_{clock}"] = theirs
                ratios[f"engine_vs_pure_{kind}_{clock}"] = mine / theirs
    rates = {key: round(v) for key, v in here["wall"].items()}
    if pure:
        rates |= {f"pure_{key}": round(v) for key, v in pure["wall"].items()}
    return {
        "games": len(records),
        "steps_per_game": round(sum(len(r["entries"]) for r in records) / len(records), 1),
        "repeats": repeats,
        "steps_per_s": rates,
        "ratios": {key: round(v, 2) for key, v in ratios.items()},
    }


def _count_loop(path: str, loop: str, loops: int) -> None:
    """The child under valgrind: `loops` replays of every record by one loop, nothing else."""
    records = json.loads(Path(path).read_text())["records"]
    freeze_fixtures()
    name, kind = loop.rsplit("_", 1)
    for _ in range(loops):
        for record in records:
            REPLAYS[name](record, kind == "observe")


def instruction_counts(records: list[Record], loops: tuple[str, ...]) -> dict[str, Any]:
    """Instructions per step of each loop, counted by valgrind (callgrind), so load-proof.

    Each loop runs in a child under callgrind twice, replaying every record once and then
    three times: the difference, halved, is what two replays cost with the start-up, the
    imports and the records' loading cancelled out.
    """
    if shutil.which("valgrind") is None:
        return {"error": "valgrind is not installed"}
    steps = sum(len(r["entries"]) for r in records)
    counts: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="engine-bench-") as tmp:
        path = str(Path(tmp) / "records.json")
        Path(path).write_text(json.dumps({"records": records}))
        for loop in loops:
            total = []
            for n in (1, 3):
                out = str(Path(tmp) / f"{loop}-{n}.out")
                subprocess.run(
                    ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                     sys.executable, __file__, "--count-loop", loop, str(n), path],
                    env=os.environ, capture_output=True, check=True, timeout=3600,
                )  # fmt: skip
                total.append(_callgrind_total(out))
            counts[loop] = (total[1] - total[0]) / 2 / steps
    ratios = {}
    for kind in ("step", "observe"):
        ref, eng = counts.get(f"reference_{kind}"), counts.get(f"engine_{kind}")
        if ref and eng:
            ratios[f"engine_vs_reference_{kind}_instructions"] = round(ref / eng, 2)
    return {
        "instructions_per_step": {k: round(v) for k, v in counts.items()},
        "ratios": ratios,
    }


def _callgrind_total(path: str) -> int:
    for line in Path(path).read_text().splitlines():
        if line.startswith("summary:") or line.startswith("totals:"):
            return int(line.split()[1])
    raise ValueError(f"no totals in {path}")


def pure_rates(path: str) -> dict[str, dict[str, float]]:
    """The interleaved replay by the pure-Python build, in a child process (same records)."""
    env = {**os.environ, "DIGDOWN_ENGINE_BUILD": "pure"}
    out = subprocess.run(
        [sys.executable, __file__, "--replay-file", path],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=1800,
    ).stdout
    rates: dict[str, dict[str, float]] = json.loads(out)
    return rates


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
    start, cpu = time.perf_counter(), time.process_time()
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
        "games_per_cpu_s": round(games / max(time.process_time() - cpu, 1e-9), 1),
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


def load_average() -> float:
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else -1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="engine throughput, one process")
    parser.add_argument("--seconds", type=float, default=5.0, help="per games loop")
    parser.add_argument("--games", type=int, default=100, help="recorded games replayed")
    parser.add_argument("--repeats", type=int, default=3, help="replays of every record")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--profile", action="store_true", help="cProfile the engine's replay")
    parser.add_argument(
        "--instructions", type=int, default=0, metavar="GAMES",
        help="also count instructions per step under valgrind, on the first GAMES records",
    )  # fmt: skip
    parser.add_argument("--replay-file", help=argparse.SUPPRESS)  # the pure build's child
    parser.add_argument("--count-loop", nargs=3, help=argparse.SUPPRESS)  # valgrind's child
    args = parser.parse_args(argv)
    if args.count_loop:
        loop, loops, path = args.count_loop
        _count_loop(path, loop, int(loops))
        return 0
    if args.replay_file:
        job = json.loads(Path(args.replay_file).read_text())
        freeze_fixtures()
        print(json.dumps(interleaved(job["records"], job["repeats"])))
        return 0
    records = recorded_games(args.games)
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(lambda: [engine_replay(r, True) for r in records])
        print(f"rules core: {build_info()['build']} build; replay with observations:")
        pstats.Stats(profile).sort_stats("tottime").print_stats(25)
        return 0
    freeze_fixtures()
    load_before = load_average()
    replay = replay_rates(records, args.repeats, pure_child=build_info()["build"] != "pure")
    if args.instructions:
        loops = tuple(f"{n}_{k}" for n in REPLAYS for k in ("step", "observe"))
        replay["instructions"] = instruction_counts(records[: args.instructions], loops)
    results = [run(kind, args.seconds) for kind in ("engine", "random", "heuristic")]
    m = {**machine(), "load_average_1m": [load_before, load_average()]}
    if args.json:
        print(json.dumps({"machine": m, "rules_build": build_info(), "replay": replay,
                          "results": results}))  # fmt: skip
        return 0
    print(
        f"machine: {m['platform']}, {m['processor']}, {m['cpu_count']} cpus, "
        f"{m['implementation']} {m['python']}, load {m['load_average_1m']}"
    )
    print(f"rules core: {build_info()['build']} build ({build_info()['reason']})")
    print(
        f"replay of {replay['games']} recorded games ({replay['steps_per_game']} entries each), "
        f"{replay['repeats']} repeats interleaved, steps/s:"
    )
    for key, rate in replay["steps_per_s"].items():
        print(f"  {key:<22} {rate:>9}")
    print("ratios (wall clock; by CPU time in brackets):")
    for key, ratio in replay["ratios"].items():
        if key.endswith("_wall"):
            cpu = replay["ratios"][key.removesuffix("_wall") + "_cpu"]
            print(f"  {key.removesuffix('_wall'):<28} {ratio:>6.2f}x  [{cpu:.2f}x]")
    counted = replay.get("instructions")
    if counted and "error" in counted:
        print(f"instructions: not counted, {counted['error']}")
    elif counted:
        per_step = ", ".join(f"{k} {v}" for k, v in counted["instructions_per_step"].items())
        print(f"instructions per step (callgrind, {args.instructions} games): {per_step}")
        for key, ratio in counted["ratios"].items():
            print(f"  {key:<28} {ratio:>6.2f}x")
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
