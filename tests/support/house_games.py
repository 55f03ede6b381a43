"""The three house bots (random, heuristic, starter) playing real games in this process.

The rules engine plays every game (``engine.simulate.play_out``); the random and
heuristic house bots are the engine's reference players, the starter is
``examples/starter_bot.py``'s ``act`` handed the dicts the SDK would hand it. A
schedule of 2- and 3-seat tables gives each bot the same number of games, so a
rating test sees the three meet as they do on a fresh ladder (``make run``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from engine.players import HeuristicPlayer, RandomPlayer
from engine.rules import Action, GameConfig, new_game
from engine.simulate import play_out
from examples import starter_bot

HOUSE = ("heuristic", "starter", "random")
TABLES: tuple[tuple[int, ...], ...] = ((0, 1), (1, 2), (0, 2), (0, 1, 2))
"""Seat line-ups (indexes into ``HOUSE``) in turn: each bot sits at three of four tables."""


class _Starter:
    """The starter bot's ``act`` on the engine's observation and legal actions."""

    def act(self, observation: Any, legal: list[Action]) -> Action:
        dicts = [a.to_dict() for a in legal]
        return legal[dicts.index(starter_bot.act(observation, dicts))]


def _player(name: str, rng: random.Random) -> Any:
    if name == "heuristic":
        return HeuristicPlayer(rng)
    if name == "random":
        return RandomPlayer(rng)
    return _Starter()


def house_schedule(games_each: int) -> list[tuple[str, ...]]:
    """Line-ups (bot names by seat) giving each house bot ``games_each`` games or a few more."""
    out: list[tuple[str, ...]] = []
    counts = dict.fromkeys(HOUSE, 0)
    n = 0
    while min(counts.values()) < games_each:
        table = TABLES[n % len(TABLES)]
        names = [HOUSE[i] for i in table]
        shift = (n // len(TABLES)) % len(names)  # rotate the seats from round to round
        names = names[shift:] + names[:shift]
        out.append(tuple(names))
        for name in names:
            counts[name] += 1
        n += 1
    return out


def house_game(names: tuple[str, ...], seed: int, ruleset: str = "dd-1") -> dict[str, Any]:
    """Play one game of ``names`` (by seat); the engine's result (ranks, 1 = best)."""
    state = new_game(GameConfig(seed=seed, num_seats=len(names), ruleset=ruleset))
    players = [_player(n, random.Random(seed * 8 + s)) for s, n in enumerate(names)]
    choose: Callable[[int, Any, list[Action]], Action] = lambda seat, obs, legal: players[  # noqa: E731
        seat
    ].act(obs, legal)
    play_out(state, choose)
    assert state.result is not None
    return dict(state.result)
