"""The rules of Digging Down (rulesets in `ruleset.py`) as a pure library.

No I/O, no clock, no global RNG, no Django, no gRPC: every other part of the
product is an adapter around this package. See docs/engine-api.md.
"""

from .actions import ACTION_ARGS, Action
from .errors import GameOver, IllegalAction, MalformedAction
from .record import replay_record
from .ruleset import DD1, DD2, RULESETS, Ruleset
from .setup import GameConfig, deal_cave, new_game
from .state import State
from .versions import ENGINE_VERSION, RECORD_FORMAT

__all__ = [
    "ACTION_ARGS",
    "DD1",
    "DD2",
    "ENGINE_VERSION",
    "RECORD_FORMAT",
    "RULESETS",
    "Action",
    "GameConfig",
    "GameOver",
    "IllegalAction",
    "MalformedAction",
    "Ruleset",
    "State",
    "deal_cave",
    "new_game",
    "replay_record",
]
