"""Golden playthroughs: one text line per record entry and its events, for fixed games.

A change to the rules engine (or to the reference bots that play these games)
that changes any decision, event or result shows up as a readable diff. After
an intended change, regenerate and review the diff:

    .venv/bin/python -m tests.engine.playthrough --write
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

from engine.players import PLAYERS
from engine.rules import GameConfig, new_game
from engine.rules.record import apply_entry
from engine.simulate import play_out

GOLDEN = Path(__file__).with_name("golden")
# (name, seed, seats, difficulty, bots by seat)
GAMES = [
    ("normal-3-heuristic", 7, 3, "normal", ["heuristic", "heuristic", "heuristic"]),
    ("hardcore-4-mixed", 11, 4, "hardcore", ["heuristic", "random", "heuristic", "random"]),
    ("easy-2-heuristic", 3, 2, "easy", ["heuristic", "heuristic"]),
]


def _event_text(event: dict) -> str:
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


def playthrough(seed: int, seats: int, difficulty: str, lineup: list[str]) -> str:
    state = new_game(GameConfig(seed=seed, num_seats=seats, difficulty=difficulty))
    bots = [PLAYERS[name](random.Random(seed * 8 + seat)) for seat, name in enumerate(lineup)]
    play_out(state, lambda seat, obs, legal: bots[seat].act(obs, legal))
    record = state.record
    lines = [
        f"# {record['ruleset']} {record['engine_version']} config={json.dumps(record['config'])}",
        f"# bots={','.join(lineup)} cave={json.dumps(record['cave'])}",
        f"# first_lead={record['first_lead']} sleeved={record['sleeved']}",
    ]
    # Re-apply the record entry by entry to show each entry's own events.
    replayed = new_game(GameConfig(seed=seed, num_seats=seats, difficulty=difficulty))
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the golden files")
    args = parser.parse_args()
    for name, seed, seats, difficulty, lineup in GAMES:
        text = playthrough(seed, seats, difficulty, lineup)
        path = GOLDEN / f"{name}.txt"
        if args.write:
            path.write_text(text)
            print(f"wrote {path} ({text.count(chr(10))} lines)")
        else:
            same = path.exists() and path.read_text() == text
            print(f"{path}: {'same' if same else 'DIFFERS'}")


if __name__ == "__main__":
    main()
