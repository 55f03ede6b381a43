"""The baseline bot: uniform over the legal actions."""

from __future__ import annotations

import random

from engine.rules import Action

from .base import Observation


class RandomPlayer:
    """Picks uniformly among the legal actions; the floor every real bot must beat."""

    name = "random"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def act(self, observation: Observation, legal: list[Action]) -> Action:
        return legal[self.rng.randrange(len(legal))]
