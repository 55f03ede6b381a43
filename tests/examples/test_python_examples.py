"""The Python example bots the docs show: their policies, in-process, against the random player.

Over gRPC they are played by test_sdk_alone.py; here many games are cheap, so the
claim "beats the random house bot" is checked over every seat count.
"""

from __future__ import annotations

import importlib.util
import random
import re
from types import ModuleType

import pytest

from engine.players import RandomPlayer
from engine.rules import GameConfig, new_game
from tests.support.processes import ROOT


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def firsts_against_random(act: object, seats: int, games: int) -> int:
    """Games (seeded, seats rotating) in which `act` took rank 1 against random players."""
    firsts = 0
    for g in range(games):
        state = new_game(GameConfig(seed=g, num_seats=seats, difficulty="normal"))
        mine = g % seats
        others = {s: RandomPlayer(random.Random(g * 8 + s)) for s in range(seats) if s != mine}
        while not state.is_over:
            seat, legal = state.acting_seat, state.legal_actions()
            if len(legal) == 1:
                state.apply_forced()
            elif seat == mine:
                offered = [a.to_dict() for a in legal]
                answer = act(state.observation(seat), offered)  # type: ignore[operator]
                state.apply(legal[offered.index(answer)])
            else:
                state.apply(others[seat].act(state.observation(seat), legal))
        assert state.result is not None
        firsts += state.result["ranks"][mine] == 1
    return firsts


@pytest.mark.parametrize("name", ["first_bot", "starter_bot"])
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_example_beats_random(name: str, seats: int) -> None:
    games = 24
    firsts = firsts_against_random(load(name).act, seats, games)
    assert firsts > games / 2, f"{name} first in {firsts} of {games} {seats}-seat games"


def test_the_docs_show_the_first_bot_as_it_is() -> None:
    """docs/writing-a-bot.md quotes examples/first_bot.py whole; they must not drift apart."""
    doc = (ROOT / "docs" / "writing-a-bot.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", doc, flags=re.S)
    assert (ROOT / "examples" / "first_bot.py").read_text() in blocks
