"""Play the same games on the compiled and the pure-Python rules core; they must be identical.

    python -m engine.compare_builds --games 3000      # the full check (a few minutes)

Each build runs in its own process (`DIGDOWN_ENGINE_BUILD=pure` for the pure one)
and plays the same games: every ruleset, 2-4 seats, every difficulty, house bots
(heuristic and random) with faults and forfeits thrown in by a seeded schedule.
For every game it hashes the record, the event log and the result exactly as
JSON writes them (key order included), and every acting seat's observation and
training vector along the way. Any difference is a bug in the compiled build or
in code that behaves differently compiled, never a tolerance: the command names
the first game that differs and exits 1. tests/engine/test_builds.py runs a
bounded version.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from engine.players import PLAYERS
from engine.rules import RULESETS, GameConfig, build_info, new_game
from engine.rules.features import features

SETUPS = [
    (ruleset, seats, difficulty)
    for ruleset in sorted(RULESETS)
    for seats in (2, 3, 4)
    for difficulty in ("easy", "normal", "hard", "hardcore")
]


def game_digest(index: int) -> str:
    """Play game `index` of the schedule; sha256 of everything it produced."""
    ruleset, seats, difficulty = SETUPS[index % len(SETUPS)]
    config = GameConfig(seed=index, num_seats=seats, difficulty=difficulty, ruleset=ruleset)
    state = new_game(config)
    bots = [
        PLAYERS["heuristic" if (index + s) % 3 else "random"](random.Random(index * 8 + s))
        for s in range(seats)
    ]
    chaos = random.Random(index)
    h = hashlib.sha256()
    while not state.is_over:
        legal = state.legal_actions()
        seat = state.acting_seat
        roll = chaos.random()
        if roll < 0.002:
            alive = [s.index for s in state.seats if not s.eliminated]
            state.forfeit(chaos.choice(alive), "dead bot")
        elif roll < 0.02:
            state.apply_default("timeout")
        elif len(legal) == 1:
            state.apply_forced()
        else:
            observation = state.observation(seat)
            h.update(_text(observation))
            h.update(_text(features(state, seat)))
            state.apply(bots[seat].act(observation, legal))
    h.update(_text({"record": state.record, "log": state.log, "result": state.result}))
    return h.hexdigest()


def _text(value: Any) -> bytes:
    return json.dumps(value).encode()


def digests(first: int, games: int) -> list[str]:
    return [game_digest(i) for i in range(first, first + games)]


def run_build(build: str, first: int, games: int) -> tuple[str, list[str]]:
    """(the build that really ran, digests) from a child process forced to `build`."""
    env = dict(os.environ)
    env.pop("DIGDOWN_ENGINE_BUILD", None)
    if build == "pure":
        env["DIGDOWN_ENGINE_BUILD"] = "pure"
    out = subprocess.run(
        [sys.executable, "-m", "engine.compare_builds", "--child", str(first), str(games)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    ).stdout
    data = json.loads(out)
    return data["build"], data["digests"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.compare_builds", description=__doc__)
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--first", type=int, default=0, help="first game of the schedule")
    parser.add_argument("--child", nargs=2, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        first, games = args.child
        print(json.dumps({"build": build_info()["build"], "digests": digests(first, games)}))
        return 0
    compiled_build, compiled = run_build("compiled", args.first, args.games)
    pure_build, pure = run_build("pure", args.first, args.games)
    if compiled_build != "compiled" or pure_build != "pure":
        print(
            f"cannot compare: the builds that ran were {compiled_build!r} and {pure_build!r} "
            f"({build_info()['reason']}; python -m engine.compile_rules makes one)"
        )
        return 2
    for i, (a, b) in enumerate(zip(compiled, pure, strict=True)):
        if a != b:
            ruleset, seats, difficulty = SETUPS[(args.first + i) % len(SETUPS)]
            print(
                f"DIFFERENT: game {args.first + i} (seed {args.first + i}, {ruleset}, "
                f"{seats} seats, {difficulty}) plays otherwise compiled than pure"
            )
            return 1
    print(f"{args.games} games identical on the compiled and the pure build")
    return 0


if __name__ == "__main__":
    sys.exit(main())
