"""The arena (`engine.arena`, `workers.arena`): real games, real gRPC, real sandbox.

Bots under test are written to files as an author would; the remote one is the
SDK's own server on a unix socket, the hosted one an upload in the ladder's
sandbox. Judgements about time use a tiny deadline and no bank, so a bot that
sleeps past it is late on any machine, however loaded.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from digdown.bot import BotServer, BotService
from engine.arena import ArenaConfig, run_arena, summarise
from engine.arena.cli import main as arena_main
from engine.arena.report import mean_interval, wilson
from engine.arena.seats import BotLoadError, author_seat
from tests.support.processes import ROOT
from tests.support.sandbox import require_sandbox

SCHEMA = json.loads((ROOT / "docs" / "replay-format.schema.json").read_text())

FAULTY = """
def act(observation, legal_actions):
    if observation["round"] == 1 and observation["acting_seat"] == observation["seat"]:
        kinds = [a["kind"] for a in legal_actions]
        if "EXPLORE" in kinds:
            raise RuntimeError("boom")
    return legal_actions[0]
"""

SLOW = """
import time

def act(observation, legal_actions):
    time.sleep(0.05)
    return legal_actions[-1]
"""

ILLEGAL = """
def act(observation, legal_actions):
    return {"kind": "MOVE", "passage": 99}
"""

STATEFUL = """
class Counter:
    def __init__(self):
        self.calls = 0

    def act(self, observation, legal_actions, context):
        self.calls += 1
        assert context.ply >= 0 and context.deadline_ms == 1000
        return len(legal_actions) - 1
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def rows_for(bot: str, **kw: Any) -> list[Any]:
    return list(run_arena(ArenaConfig(bot=bot, **kw)))


def test_first_bot_beats_random_and_rotates_seats(tmp_path: Path) -> None:
    rows = rows_for(str(ROOT / "examples" / "first_bot.py"), lineups=(("random",),), games=20)
    assert sorted({r.seat for r in rows}) == [0, 1]  # the author's seat rotates
    assert [r.seed for r in rows] == list(range(20))
    (stats,) = summarise([("random",)], rows, duplicate=False)
    assert stats.games == 20 and stats.faults == 0 and stats.decisions > 20
    assert stats.rank1_low > 0.5, stats  # first_bot beats random (docs/writing-a-bot.md)
    assert stats.rank1_low <= stats.rank1 <= stats.rank1_high
    assert stats.think_ms["p50"] <= stats.think_ms["p99"] <= stats.think_ms["max"]


def test_duplicate_deals_play_every_rotation_and_count_deals(tmp_path: Path) -> None:
    config = ArenaConfig(
        bot=str(ROOT / "examples" / "first_bot.py"),
        lineups=(("random", "heuristic"),),
        games=7,
        duplicate=True,
    )
    jobs = config.jobs()
    assert len(jobs) == 9  # rounded up to whole deals of 3 rotations
    assert {(j.seed, j.seat) for j in jobs} == {(s, r) for s in range(3) for r in range(3)}
    (stats,) = summarise(config.lineups, list(run_arena(config)), duplicate=True)
    assert (stats.games, stats.units, stats.seats) == (9, 3, 3)


def test_exceptions_become_faults_with_their_reason_and_replays_are_kept(tmp_path: Path) -> None:
    bot = write(tmp_path, "faulty.py", FAULTY)
    out = tmp_path / "out"
    code = arena_main(
        [f"--bot={bot}", "--vs=random", "--games=6", "--workers=1", f"--out={out}", "--json"]
    )
    assert code == 0
    kept = sorted(out.glob("faulted-*.json.gz"))
    assert kept, list(out.iterdir())
    doc = json.loads(gzip.decompress(kept[0].read_bytes()))
    jsonschema.validate(doc, SCHEMA)  # the ladder's replay format, viewer-ready
    reasons = [f["reason"] for f in doc["faults"]]
    assert any("bot error: RuntimeError: boom" in r for r in reasons), reasons
    assert sorted(out.glob("slowest-*.json.gz"))


def test_late_answers_are_timeouts_and_illegal_answers_faults(tmp_path: Path) -> None:
    slow = rows_for(
        str(write(tmp_path, "slow.py", SLOW)),
        lineups=(("random",),),
        games=2,
        deadline_s=0.001,
        bank_s=0.0,
    )
    assert all(r.timeouts >= 1 for r in slow)
    assert all(r.ended == "forfeited" for r in slow)  # the third fault forfeits
    assert all(min(r.think_ms) >= 50 for r in slow)  # measured, not assumed
    illegal = rows_for(str(write(tmp_path, "illegal.py", ILLEGAL)), lineups=(("random",),), games=2)
    assert all(r.ended == "forfeited" and r.timeouts == 0 for r in illegal)
    assert all(x.startswith("illegal:") for r in illegal for x in r.fault_reasons)


def test_a_class_is_one_instance_per_game_and_gets_the_context(tmp_path: Path) -> None:
    bot = write(tmp_path, "stateful.py", STATEFUL)
    rows = rows_for(f"{bot}:Counter", lineups=(("random",),), games=3)
    assert all(r.faults == 0 and r.think_ms for r in rows)


def test_a_remote_bot_is_asked_over_grpc_and_gone_bots_are_clear_errors(tmp_path: Path) -> None:
    sock = f"unix:{tmp_path}/bot.sock"
    calls = []

    def act(observation: dict[str, Any], legal: list[dict[str, Any]]) -> int:
        calls.append(observation["seat"])
        return 0

    server = BotServer(BotService(act, name="remote-first"), sock)
    server.start()
    try:
        rows = rows_for(sock, lineups=(("heuristic", "random"),), games=3, workers=2)
    finally:
        server.stop(0.5)
    assert len(rows) == 3 and calls and all(r.faults == 0 for r in rows)
    with pytest.raises(BotLoadError, match="no bot answers"):
        author_seat(f"unix:{tmp_path}/nobody.sock")
    with pytest.raises(BotLoadError, match="neither an act"):
        author_seat(str(write(tmp_path, "empty.py", "x = 1\n")))


def test_a_hosted_bundle_plays_in_the_ladder_sandbox(tmp_path: Path) -> None:
    require_sandbox()
    bundle = tmp_path / "bot.zip"
    with zipfile.ZipFile(bundle, "w") as zf:
        zf.write(ROOT / "examples" / "starter_bot.py", "bot.py")
    run = subprocess.run(
        [sys.executable, "-m", "workers.arena", f"--bot=hosted:{bundle}", "--vs=random",
         "--games=4", "--workers=1", "--json", f"--out={tmp_path / 'out'}"],
        cwd=ROOT, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    (line,) = report["lineups"]
    assert line["games"] == 4 and line["faults"] == 0 and line["decisions"] > 0
    assert "sandbox at unix:" in run.stderr


def test_intervals() -> None:
    low, high = wilson(0, 10)
    assert low == 0 and 0.2 < high < 0.35
    low, high = wilson(10, 10)
    assert high == 1 and 0.65 < low < 0.8
    assert mean_interval([1.0, 1.0, 1.0]) == (1.0, 1.0, 1.0)
    m, lo, hi = mean_interval([1.0, 2.0])
    assert lo < m == 1.5 < hi


def test_the_engine_dicts_an_in_process_bot_gets_are_what_the_sdk_server_builds() -> None:
    """The arena hands `act` the engine's dicts directly: they must equal the SDK's."""
    import random

    from digdown import wire
    from digdown.proto_codec import message_to_dict
    from engine.players import PLAYERS
    from engine.rules import GameConfig, new_game

    asked = 0
    for seed, (seats, difficulty) in enumerate([(2, "easy"), (3, "hardcore"), (4, "hard")]):
        state = new_game(
            GameConfig(seed=seed, num_seats=seats, difficulty=difficulty, ruleset="dd-2")
        )
        bots = [PLAYERS["heuristic"](random.Random(s)) for s in range(seats)]
        while not state.is_over:
            legal = state.legal_actions()
            if len(legal) == 1:
                state.apply_forced()
                continue
            obs = state.observation(state.acting_seat)
            assert message_to_dict(wire.observation_to_proto(obs)) == obs
            as_sdk = [wire.action_from_proto(m) for m in wire.actions_to_proto(legal)]
            assert as_sdk == [a.to_dict() for a in legal]
            asked += 1
            state.apply(bots[state.acting_seat].act(obs, legal))
    assert asked > 50


MUTATING = """
def act(observation, legal_actions):
    for p in observation["passages"]:
        p.clear()  # a bot may change what it was given: its own copy
    observation["players"].clear()
    observation["unseen"].clear()
    return 0
"""


def test_a_bot_that_changes_its_observation_changes_nothing_else(tmp_path: Path) -> None:
    bot = str(write(tmp_path, "mutating.py", MUTATING))
    rows = rows_for(bot, lineups=(("heuristic",),), games=4)
    assert all(r.faults == 0 for r in rows), [r.fault_reasons for r in rows]
    # The same games by a bot that answers the same without touching anything.
    clean = str(write(tmp_path, "first.py", "def act(o, legal):\n    return 0\n"))
    again = rows_for(clean, lineups=(("heuristic",),), games=4)
    assert [(r.rank, r.loot_points, len(r.think_ms)) for r in rows] == [
        (r.rank, r.loot_points, len(r.think_ms)) for r in again
    ]
