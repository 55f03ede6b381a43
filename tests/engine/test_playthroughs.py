"""The golden playthroughs still play out line for line (see tests/engine/playthrough.py)."""

from __future__ import annotations

import difflib

import pytest

from engine.rules import ENGINE_VERSION
from tests.engine.playthrough import GAMES, GOLDEN, header, play, playthrough, same_version

# Every event kind of docs/engine-api.md.
EVENT_KINDS = {
    "GAME_START", "ROUND_START", "BASE_REFILL", "LOOT_TO_INVENTORY", "EXCHANGE", "TRADE",
    "GIVE", "STASH", "UNSTASH", "DISCARD", "DONE", "ELIMINATED", "TURN_START", "EXPLORE",
    "CONTINUE", "RETURN", "TORCH_PAID", "LOOT_SECURED", "LOOT_LOST", "MOVE", "PEEK", "READY",
    "REVEAL", "ATTEMPT", "LEAVE", "COMMIT", "STOP", "RESOLVED", "UNRESOLVED", "DAMAGE",
    "OBJECTIVE", "RESPAWN", "ROUND_END", "FAULT", "FORFEIT", "GAME_END",
}  # fmt: skip


@pytest.mark.parametrize("game", GAMES, ids=[g.name for g in GAMES])
def test_golden_playthrough(game):
    expected = (GOLDEN / f"{game.name}.txt").read_text()
    actual = playthrough(game)
    if actual != expected:
        diff = difflib.unified_diff(
            expected.splitlines(), actual.splitlines(), "golden", "now", lineterm="", n=1
        )
        pytest.fail(
            "playthrough changed. If the rules were meant to change, bump ENGINE_VERSION "
            "(engine/rules/versions.py), run `.venv/bin/python -m tests.engine.playthrough "
            "--write` and review:\n" + "\n".join(list(diff)[:40])
        )


def test_every_golden_was_written_by_this_engine_version():
    """A golden of another version means its game changed without a version bump (or the
    version changed without the goldens being rewritten)."""
    for game in GAMES:
        text = (GOLDEN / f"{game.name}.txt").read_text()
        assert same_version(text), f"{game.name}: {text.splitlines()[0]} is not {ENGINE_VERSION}"


def test_write_refuses_a_changed_game_under_the_same_version():
    record = play(GAMES[0]).record
    assert same_version(header(record) + "\n...")
    older = dict(record, engine_version="digdown-engine/0.0.1")
    assert not same_version(header(older) + "\n...")


def test_goldens_together_show_every_event_kind_faults_forfeits_and_a_win():
    kinds: set[str] = set()
    reasons: set[str] = set()
    for game in GAMES:
        state = play(game)
        kinds |= {e["kind"] for e in state.log}
        reasons.add(state.result["reason"])
    assert kinds == EVENT_KINDS, f"missing {EVENT_KINDS - kinds}, unknown {kinds - EVENT_KINDS}"
    assert {"won", "last_standing"} <= reasons


def test_dd2_goldens_show_riders_paying_the_caller_and_dd1_goldens_none():
    riders = {"dd-1": 0, "dd-2": 0}
    for game in GAMES:
        log = play(game).log
        paid = [e for e in log if e["kind"] == "TORCH_PAID" and "to_seat" in e]
        riders[game.config.ruleset] += len(paid)
    assert riders["dd-1"] == 0 and riders["dd-2"] > 0
