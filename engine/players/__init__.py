"""In-process bots for simulation, benchmarks and the ladder's house players.

Pure code: no I/O, no clock, no global RNG. Each bot is built with its own
seeded `random.Random` and decides from the observation dict alone.
"""

from __future__ import annotations

from .base import DictActions, Observation, Player, PlayerFactory, dict_actions
from .heuristic import HeuristicParams, HeuristicPlayer
from .random_player import RandomPlayer

PLAYERS: dict[str, PlayerFactory] = {
    "random": RandomPlayer,
    "heuristic": HeuristicPlayer,
}

__all__ = [
    "PLAYERS",
    "DictActions",
    "HeuristicParams",
    "HeuristicPlayer",
    "Observation",
    "Player",
    "PlayerFactory",
    "RandomPlayer",
    "dict_actions",
]
