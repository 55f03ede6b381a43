"""Bots that attack: the engine they can reach, and the text they hand back.

The engine and the bots are real processes on loopback; the match must finish
with a replay that verifies, the attacks must change nothing, and nothing a
bot wrote may reach the replay, the runner's log or the CLI's output raw.
"""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from digdown import text
from tests.support.processes import ROOT, Proc, start_bot
from workers.runner import MatchOutcome, TimeControl, run_match

# Generous: the hostile bot spends its first decision attacking the engine.
PATIENT = TimeControl(decision_s=3.0, bank_s=3.0, handshake_s=5.0, engine_timeout_s=10.0)


def printable(value: str) -> bool:
    """One line, without control or format characters (what `digdown.text.clean` keeps)."""
    return not any(unicodedata.category(c) in {"Cc", "Cf", "Zl", "Zp"} for c in value)


def all_strings(doc: object) -> list[str]:
    if isinstance(doc, str):
        return [doc]
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in all_strings(k) + all_strings(v)]
    if isinstance(doc, list):
        return [s for v in doc for s in all_strings(v)]
    return []


@pytest.fixture
def hostile(engine: Proc, tmp_path: Path) -> Iterator[Proc]:
    """The hostile bot; what it tried on the engine lands in tmp_path/attack.json."""
    bot = start_bot(
        "hostile_bot.py", tmp_path, "hostile", "--engine", engine.address,
        "--report", str(tmp_path / "attack.json"),
    )  # fmt: skip
    yield bot
    bot.stop()


def play(engine: Proc, bots: list[str], tmp_path: Path, seed: int) -> MatchOutcome:
    return run_match(
        engine.address, bots, seed=seed, time_control=PATIENT,
        out=tmp_path / "replay.json.gz", verify=True,
    )  # fmt: skip


def test_a_bot_that_knows_the_game_id_cannot_touch_the_game(
    engine: Proc, random_bots: list[Proc], hostile: Proc, tmp_path: Path
) -> None:
    outcome = play(engine, [hostile.address, random_bots[0].address], tmp_path, seed=3)
    report = tmp_path / "attack.json"
    tried = json.loads(report.read_text())
    assert len(tried) == 12, tried
    for call, answer in tried.items():
        if call.startswith("CloseGame[13]"):  # a well-formed guess: "no such game", closed false
            assert answer == "OK", (call, answer)
        elif "[13]" in call:  # a guessed token: the very answer an unknown game_id gets
            assert answer == "NOT_FOUND", (call, answer)
        else:  # no token, or one too long to be real: refused unread
            assert answer == "INVALID_ARGUMENT", (call, answer)
    # Nothing the bot tried was applied: the match ran to its end and re-verifies.
    assert outcome.verified is True
    assert not any(e.get("reason") == "pwned" for e in outcome.replay["events"])
    assert outcome.result["seats"][1]["ended"] != "forfeited"
    assert "control_token" not in json.dumps(outcome.replay)


def test_bot_text_is_cleaned_and_bounded_everywhere(
    engine: Proc, random_bots: list[Proc], hostile: Proc, tmp_path: Path
) -> None:
    outcome = play(engine, [hostile.address, random_bots[0].address], tmp_path, seed=4)
    cli = [sys.executable, "-m", "workers.play", "--engine", engine.address, "--seed", "5"]
    cli += ["--bot", hostile.address, "--bot", random_bots[1].address]
    cli += ["--deadline", "3", "--bank", "3", "--log-level", "INFO"]
    out = subprocess.run(cli, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    name = outcome.replay["seats"][0]["bot"]
    assert name.startswith("[2J[31mOWNED[0m FAKE LOG LINEevilNNN")
    assert len(name) == text.NAME_MAX and outcome.replay["seats"][0]["version"] == "v1"
    kinds = [f.kind for f in outcome.faults if f.seat == 0]
    assert kinds == ["error", "malformed"], outcome.faults
    error, malformed = (f.reason for f in outcome.faults)
    assert error.startswith("error: INTERNAL: [2J[31mOWNED") and len(error) <= text.REASON_MAX
    # What was wrong with the undecodable reply: its size and first bytes.
    head = "ff ff ff ff ff ff ff ff 0f 1b 1b 1b 1b 1b 1b 1b"
    assert malformed == f"malformed: undecodable reply (5009 bytes starting {head} ...)"
    # Every string of the replay (names, fault reasons, events other bots saw) is clean.
    bad = [s for s in all_strings(outcome.replay) if not printable(s)]
    assert bad == []
    assert all(len(s) <= 500 for s in all_strings(outcome.replay))
    # The CLI prints the same names and reasons: no escape, no forged line.
    assert out.returncode == 0, out.stderr
    assert "\x1b" not in out.stdout + out.stderr and "\x07" not in out.stdout + out.stderr
    assert "\r" not in out.stdout + out.stderr
    assert not any(line.startswith("FAKE") for line in (out.stdout + out.stderr).splitlines())
    # One line per fault in the runner's log, not a grpcio traceback per undecodable reply.
    assert "Traceback" not in out.stderr and "Exception deserializing" not in out.stderr
