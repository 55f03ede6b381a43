"""engine/training/dataset.py: replays as decisions, and the behaviour-cloning example."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from engine.training import bc_example, dataset


def test_a_replays_decisions_are_its_real_choices_in_order(tmp_path: Any) -> None:
    line = next(bc_example.heuristic_lines(1, seed=5))
    entries = line["replay"]["decisions"]
    rows = list(dataset.decision_rows(line))
    chosen = [i for i, e in enumerate(entries) if "action" in e and not e.get("forced")]
    assert [r["turn"] for r in rows] == chosen
    assert all(r["action"] in r["legal"] for r in rows)
    assert {r["rank"] for r in rows} <= {1, 2}
    (tmp_path / "one.jsonl").write_text(json.dumps(line) + "\n")
    arrays = dataset.load(tmp_path / "one.jsonl")
    assert (arrays.ruleset, arrays.seats) == ("dd-2", 2)
    assert arrays.observations.shape == (len(rows), len(rows[0]["observation"]))
    assert (arrays.masks[np.arange(len(rows)), arrays.actions] == 1).all()
    with pytest.raises(ValueError, match="no decisions"):
        (tmp_path / "empty.jsonl").write_text("")
        dataset.load(tmp_path / "empty.jsonl")


def test_behaviour_cloning_learns_the_heuristic_better_than_chance(capsys: Any) -> None:
    bc_example.main(["--games", "40", "--epochs", "4", "--hidden", "32", "--eval-games", "10"])
    out = capsys.readouterr().out
    agree = float(out.split("held-out decisions: ")[1].split()[0])
    chance = float(out.split("random legal choice: ")[1].split(")")[0])
    assert agree > chance + 0.2, out
    assert "behaviour-cloned policy" in out and "random policy" in out
