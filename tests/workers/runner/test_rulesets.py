"""A match on ruleset dd-2 end to end: real engine, real heuristic bots, replay verified.

The runner passes the ruleset through to the engine; nothing in between may
assume dd-1. The heuristic bots make a game with returns, so riders pay.
"""

from __future__ import annotations

import random
from pathlib import Path

from engine.players import HeuristicPlayer
from engine.rules import GameConfig, new_game
from engine.simulate import play_out
from tests.support.processes import Proc, start_bot
from workers.runner import TimeControl, run_match, verify_replay
from workers.runner import replay as replay_io

# Generous: heuristic answers take milliseconds, but the machine may be busy.
CALM = TimeControl(decision_s=5.0, bank_s=10.0, handshake_s=10.0, engine_timeout_s=20.0)
SEED = 6


def test_a_dd2_match_plays_verifies_and_matches_the_engine_in_process(
    engine: Proc, tmp_path: Path
) -> None:
    bots = [start_bot("examples.heuristic_bot", tmp_path, f"h{i}") for i in range(3)]
    out = tmp_path / "dd2.json.gz"
    try:
        outcome = run_match(
            engine.address,
            [b.address for b in bots],
            seed=SEED,
            ruleset="dd-2",
            time_control=CALM,
            out=out,
            verify=True,
        )
    finally:
        for b in bots:
            b.stop()
    assert outcome.verified is True
    doc = replay_io.read(out)
    assert doc["ruleset"] == doc["config"]["ruleset"] == "dd-2"
    assert verify_replay(engine.address, doc).ok
    riders = [e for e in doc["events"] if e["kind"] == "TORCH_PAID" and "to_seat" in e]
    assert riders, "in dd-2 a rider holding loot pays the caller"

    # The same game in process: the heuristic does not use its RNG, so (with deadlines no
    # heuristic answer misses) the remote game is this one.
    assert outcome.faults == []
    state = new_game(GameConfig(seed=SEED, num_seats=3, ruleset="dd-2"))
    players = [HeuristicPlayer(random.Random(0)) for _ in range(3)]
    play_out(state, lambda seat, obs, legal: players[seat].act(obs, legal))
    assert doc["result"]["ranks"] == state.result["ranks"]
    assert [e["kind"] for e in doc["events"]] == [e["kind"] for e in state.log]
