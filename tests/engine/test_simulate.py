"""The simulate CLI: line-up rotation, the summary, --json and --check as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engine.simulate import CheckFailed, lineup_for, main, play_game, simulate

ROOT = Path(__file__).resolve().parents[2]


def test_lineup_pads_with_last_bot_and_rotates_through_every_seat() -> None:
    assert lineup_for(["heuristic", "random"], 4, 0) == ["heuristic", "random", "random", "random"]
    seats = [lineup_for(["heuristic", "random"], 4, i).index("heuristic") for i in range(4)]
    assert sorted(seats) == [0, 1, 2, 3]
    assert lineup_for(["a", "b", "c"], 3, 1) == ["c", "a", "b"]


def test_summary_adds_up() -> None:
    s = simulate(12, 4, "normal", ["heuristic", "random"], seed=5).to_dict()
    assert s["games"] == 12
    assert sum(s["end_reasons"].values()) == pytest.approx(1.0)
    assert s["turns_p90"] >= 1
    assert len(s["seat_rank1_share"]) == 4
    assert set(s["bot_rank1_share"]) == {"heuristic", "random"}
    assert s["decisions"] > 0 and s["decisions_per_s"] > 0


def test_check_mode_plays_random_games_cleanly() -> None:
    for seed in range(20):
        outcome = play_game(seed, 4, "normal", ["random"] * 4, check=True)
        assert outcome.reason != "turn_limit"


def test_check_mode_reports_a_broken_invariant(monkeypatch: pytest.MonkeyPatch) -> None:
    from engine.rules import State

    def broken(self: State) -> dict[int, str]:
        raise AssertionError("card 7 is both in passage 0 and box")

    monkeypatch.setattr(State, "card_places", broken)
    with pytest.raises(CheckFailed, match="card 7"):
        play_game(0, 2, "normal", ["random", "random"], check=True)
    assert main(["--games", "1", "--players", "2", "--bots", "random", "--check"]) == 1


def test_cli_json_as_a_subprocess() -> None:
    cmd = [sys.executable, "-m", "engine.simulate", "--games", "8", "--players", "3"]
    cmd += ["--difficulty", "easy", "--bots", "heuristic,random", "--seed", "11", "--json"]
    cmd += ["--check"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    data = json.loads(done.stdout)
    assert data["games"] == 8
    assert data["config"]["check"] is True
    assert data["config"]["bots"] == ["heuristic", "random"]
    assert data["end_reasons"].get("turn_limit", 0) == 0
    # The process reports exactly what the same games give in this one (seeded, no clock).
    here = simulate(8, 3, "easy", ["heuristic", "random"], seed=11).to_dict()
    for key in ("end_reasons", "turns_mean", "seat_rank1_share", "bot_rank1_share"):
        assert data[key] == here[key], key
    # Each heuristic seat faces two random ones: it takes rank 1 far more often.
    shares = data["bot_rank1_share"]
    assert shares["heuristic"] > 0.5 > shares["random"]


def test_cli_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--games", "3", "--players", "2", "--bots", "random", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "end reasons:" in out and "games/s" in out and "seat rank-1 share" in out


def test_cli_rejects_unknown_bot() -> None:
    with pytest.raises(SystemExit):
        main(["--bots", "nobody"])


def test_check_mode_reports_a_record_that_does_not_replay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import engine.simulate as sim

    monkeypatch.setattr(sim, "replay_record", lambda record: ([], None))
    with pytest.raises(CheckFailed, match="replay"):
        play_game(1, 3, "normal", ["random"] * 3, check=True)


def test_ruleset_option_plays_that_ruleset(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--games", "4", "--players", "4", "--ruleset", "dd-2", "--json", "--check"]
    assert main([*args, "--bots", "always-return,heuristic"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["config"]["ruleset"] == "dd-2"
    # The same seeds and bots on dd-1 play other games: riders pay in dd-2.
    dd1 = simulate(4, 4, "normal", ["always-return", "heuristic"]).to_dict()
    assert dd1["turns_mean"] != data["turns_mean"]
    with pytest.raises(SystemExit):
        main(["--ruleset", "dd-0"])
