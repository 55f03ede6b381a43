"""Golden playthroughs: one text line per record entry and its events, for fixed games.

Each game is played from fixed choices - a seeded chooser defined here that
favours eventful actions, plus scheduled faults and forfeits - never by a bot
of `engine.players`, so tuning a bot cannot rewrite the rules' goldens. A
change to the rules engine that changes any decision, event or result shows up
as a readable diff; such a change must come with a new `ENGINE_VERSION`
(engine/rules/versions.py), and `--write` refuses to rewrite a golden's
game under the version it was written with:

    .venv/bin/python -m tests.engine.playthrough --write
"""

from __future__ import annotations

import argparse
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.rules import ENGINE_VERSION, Action, GameConfig, State, new_game
from engine.rules.record import apply_entry

GOLDEN = Path(__file__).with_name("golden")

# How much each kind of action is favoured (spread over the legal actions of that kind):
# go on exploring, dig, upgrade; return and give now and then.
KIND_WEIGHTS = {
    "EXCHANGE": 8.0,
    "TRADE": 3.0,
    "GIVE": 0.5,
    "STASH": 1.0,
    "UNSTASH": 1.5,
    "DISCARD": 0.3,
    "DONE": 4.0,
    "EXPLORE": 8.0,
    "CONTINUE": 12.0,
    "RETURN": 1.0,
    "MOVE": 2.0,
    "PEEK": 1.0,
    "READY": 3.0,
    "ATTEMPT": 6.0,
    "LEAVE": 1.0,
    "COMMIT": 6.0,
    "STOP": 1.0,
}


@dataclass(frozen=True)
class Golden:
    """One golden game: its config, the chooser's seed, and who misbehaves when.

    `faulty_seat` faults on every `fault_every`-th decision it is asked (its
    third fault forfeits it); `dead_seat` forfeits (a dead bot) at ply `dead_at`.
    """

    name: str
    config: GameConfig
    choice_seed: int
    faulty_seat: int = -1
    fault_every: int = 0
    dead_seat: int = -1
    dead_at: int = -1


GAMES = [
    Golden("dd-1-normal-3-won", GameConfig(seed=10, num_seats=3, difficulty="normal"), 10),
    Golden("dd-1-easy-2-won", GameConfig(seed=13, num_seats=2, difficulty="easy"), 13),
    Golden(
        "dd-1-hardcore-4-faults",
        GameConfig(seed=11, num_seats=4, difficulty="hardcore"),
        11,
        faulty_seat=1,
        fault_every=4,
    ),
    Golden(
        "dd-1-hard-4-forfeit",
        GameConfig(seed=5, num_seats=4, difficulty="hard"),
        5,
        faulty_seat=2,
        fault_every=25,
        dead_seat=0,
        dead_at=120,
    ),
    Golden(
        "dd-2-normal-3-won",
        GameConfig(seed=135, num_seats=3, difficulty="normal", ruleset="dd-2"),
        135,
    ),
    Golden(
        "dd-2-normal-2-won",
        GameConfig(seed=48, num_seats=2, difficulty="normal", ruleset="dd-2"),
        48,
    ),
    Golden(
        "dd-2-hard-4-faults-forfeit",
        GameConfig(seed=9, num_seats=4, difficulty="hard", ruleset="dd-2"),
        9,
        faulty_seat=1,
        fault_every=6,
        dead_seat=2,
        dead_at=150,
    ),
]


def choose(rng: random.Random, legal: list[Action]) -> Action:
    """A weighted draw over `legal` that uses only `rng.random()` (pinned across versions)."""
    per_kind: dict[str, int] = {}
    for action in legal:
        per_kind[action.kind] = per_kind.get(action.kind, 0) + 1
    weights = [KIND_WEIGHTS[a.kind] / per_kind[a.kind] for a in legal]
    x = rng.random() * sum(weights)
    for action, weight in zip(legal, weights, strict=True):
        x -= weight
        if x < 0:
            return action
    return legal[-1]


def play(game: Golden) -> State:
    """Play one golden game to its end from its fixed choices."""
    state = new_game(game.config)
    rng = random.Random(game.choice_seed)
    asked = [0] * game.config.num_seats
    while not state.is_over:
        ply = len(state.record["entries"])
        if ply == game.dead_at and not state.seats[game.dead_seat].eliminated:
            state.forfeit(game.dead_seat, "bot process died")
            continue
        legal = state.legal_actions()
        if len(legal) == 1:
            state.apply_forced()
            continue
        seat = state.acting_seat
        asked[seat] += 1
        if seat == game.faulty_seat and asked[seat] % game.fault_every == 0:
            state.apply_default("deadline exceeded")
        else:
            state.apply(choose(rng, legal))
    return state


def _event_text(event: dict[str, Any]) -> str:
    fields = []
    for key, value in event.items():
        if key == "kind":
            continue
        if key == "card":
            value = value["name"]
        elif key == "cards":
            value = "[" + ", ".join(c["name"] for c in value) + "]"
        fields.append(f"{key}={value}")
    return f"{event['kind']}({', '.join(fields)})"


def header(record: dict[str, Any]) -> str:
    """The golden's first line: ruleset, the engine version that wrote it, and config."""
    return f"# {record['ruleset']} {record['engine_version']} config={json.dumps(record['config'])}"


def playthrough(game: Golden) -> str:
    state = play(game)
    record = state.record
    lines = [
        header(record),
        f"# cave={json.dumps(record['cave'])}",
        f"# first_lead={record['first_lead']} sleeved={record['sleeved']}",
    ]
    # Re-apply the record entry by entry to show each entry's own events.
    replayed = new_game(game.config)
    lines.append("setup: " + "; ".join(_event_text(e) for e in replayed.log))
    for entry in record["entries"]:
        events = apply_entry(replayed, entry)
        what = entry.get("action") or {"fault": entry.get("fault"), "forfeit": entry.get("forfeit")}
        forced = " (forced)" if entry.get("forced") else ""
        lines.append(
            f"seat {entry['seat']}: {json.dumps(what, sort_keys=True)}{forced} -> "
            + "; ".join(_event_text(e) for e in events)
        )
    lines.append("result: " + json.dumps(state.result, sort_keys=True))
    return "\n".join(lines) + "\n"


def same_version(golden_text: str) -> bool:
    """Whether a golden was written by this ENGINE_VERSION."""
    first = golden_text.split("\n", 1)[0].split()
    return len(first) > 2 and first[2] == ENGINE_VERSION


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write new or changed goldens")
    args = parser.parse_args()
    refused = 0
    for game in GAMES:
        text = playthrough(game)
        path = GOLDEN / f"{game.name}.txt"
        old = path.read_text() if path.exists() else None
        if old == text:
            print(f"{path}: same")
            continue
        if not args.write:
            print(f"{path}: {'DIFFERS' if old is not None else 'MISSING'}")
            continue
        if old is not None and same_version(old):
            print(f"{path}: DIFFERS under the same {ENGINE_VERSION}: bump ENGINE_VERSION first")
            refused += 1
            continue
        path.write_text(text)
        print(f"wrote {path} ({text.count(chr(10))} lines)")
    return 1 if refused else 0


if __name__ == "__main__":
    raise SystemExit(main())
