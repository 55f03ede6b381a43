"""The bot interface shared by every in-process bot.

A bot sees only what a remote bot would see: the observation dict of its seat
(public information, docs/engine-api.md) and the list of legal actions. Any
randomness comes from the `random.Random` it was built with, so that a
simulation is reproducible from its seed and never touches the global RNG.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from engine.rules import Action
from engine.rules.shapes import Observation as Observation


@runtime_checkable
class Player(Protocol):
    """Chooses one of the legal actions for the seat the observation belongs to."""

    name: str

    def act(self, observation: Observation, legal: list[Action]) -> Action:
        """Return one element of `legal` (never empty; the engine only asks on a choice)."""
        ...


PlayerFactory = Callable[[random.Random], Player]


class DictActions:
    """An in-process player behind the bot SDK's interface (actions as dicts, answer an index).

    The SDK hands a bot plain dicts (`digdown.bot`); the players here decide on
    `engine.rules.Action` values. This is the one place that converts, so the
    house bots over gRPC play exactly as they do in the simulator.
    """

    def __init__(self, player: Player) -> None:
        self.player = player

    def act(self, observation: Observation, legal: list[dict[str, Any]]) -> int:
        actions = [Action.from_dict(a) for a in legal]
        return actions.index(self.player.act(observation, actions))


def dict_actions(factory: PlayerFactory) -> Callable[[random.Random], DictActions]:
    """A factory of `factory`'s players, each behind `DictActions`."""
    return lambda rng: DictActions(factory(rng))
