"""The benchmark's naive reference simulator (bench/reference_rules.py) plays the engine's games.

`bench/engine_bench.py` measures the engine against it, so it has to be the
same rules: replaying games the engine recorded (random and heuristic play,
every ruleset, seat count and difficulty, faults and forfeits), it must list
the same legal actions, show every seat the same observation, cause the same
events and reach the same result, entry for entry.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.players import PLAYERS
from engine.rules import GameConfig, State, new_game
from engine.rules.record import apply_entry, state_from_record_setup

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from reference_rules import ReferenceGame

CONFIGS = [
    GameConfig(seed=s, num_seats=n, difficulty=d, ruleset=r)
    for s, (n, d, r) in enumerate(
        [(n, d, r) for r in ("dd-1", "dd-2") for n in (2, 3, 4)
         for d in ("easy", "normal", "hard", "hardcore")]
    )
]  # fmt: skip


def played(config: GameConfig, bot: str, misbehave: bool) -> State:
    """A finished game: `bot` in every seat; with `misbehave`, faults now and then and a forfeit."""
    state = new_game(config)
    bots = [PLAYERS[bot](random.Random(config.seed * 8 + s)) for s in range(config.num_seats)]
    rng = random.Random(config.seed)
    while not state.is_over:
        legal = state.legal_actions()
        roll = rng.random()
        if misbehave and roll < 0.004:
            alive = [seat.index for seat in state.seats if not seat.eliminated]
            state.forfeit(rng.choice(alive), "dead bot")  # the acting seat or any other
        elif misbehave and roll < 0.03:
            state.apply_default("timeout")
        elif len(legal) == 1:
            state.apply_forced()
        else:
            seat = state.acting_seat
            state.apply(bots[seat].act(state.observation(seat), legal))
    return state


def agree(record: dict[str, Any]) -> None:
    engine = state_from_record_setup(record)
    ref = ReferenceGame(record)
    seats = range(record["config"]["num_seats"])
    assert ref.events == engine.log
    for ply, entry in enumerate(record["entries"]):
        where = f"seed {record['config']['seed']} ply {ply}"
        assert ref.legal() == [a.to_dict() for a in engine.legal_actions()], where
        for seat in seats:
            assert ref.observation(seat) == engine.observation(seat), f"{where} seat {seat}"
        assert ref.step(entry) == apply_entry(engine, entry), where
    assert ref.result == engine.result
    assert ref.events == engine.log


@pytest.mark.parametrize(
    "config", CONFIGS, ids=lambda c: f"{c.ruleset}-{c.num_seats}-{c.difficulty}"
)
def test_reference_replays_the_engines_games(config: GameConfig) -> None:
    for bot, misbehave in (("random", True), ("heuristic", False), ("heuristic", True)):
        agree(played(config, bot, misbehave).record)
