"""In-process bots for simulation, benchmarks and the ladder's house players.

Pure code: no I/O, no clock, no global RNG. Each bot is built with its own
seeded `random.Random` and decides from the observation dict alone.
"""

from __future__ import annotations

from .base import Bot, BotFactory, Observation
from .heuristic import HeuristicBot, HeuristicParams
from .random_bot import RandomBot

BOTS: dict[str, BotFactory] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
}

__all__ = [
    "BOTS",
    "Bot",
    "BotFactory",
    "HeuristicBot",
    "HeuristicParams",
    "Observation",
    "RandomBot",
]
