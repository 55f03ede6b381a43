"""Training bots against the rules engine: a PettingZoo AEC environment (`DiggingDownEnv`).

Optional: install the `train` extra (`pip install -e '.[train]'`). Nothing else of
the project imports this package, so the engine and the ladder never need it.
A short loop that plays thousands of games and reports games/s:
`python -m engine.training.example --games 3000`. `DiggingDownVectorEnv` steps many
games at once (batched arrays in, batched arrays out) for learners that batch.
"""

from __future__ import annotations

from .encoding import ActionCatalog, ObservationEncoder
from .env import DiggingDownEnv, rank_rewards
from .vector import DiggingDownVectorEnv

__all__ = [
    "ActionCatalog",
    "DiggingDownEnv",
    "DiggingDownVectorEnv",
    "ObservationEncoder",
    "rank_rewards",
]
