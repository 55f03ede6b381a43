"""The heuristic bot over gRPC: `python -m examples.heuristic_bot --listen 127.0.0.1:50061`.

Wraps engine/players' HeuristicPlayer (one seeded instance per game and seat), so the
ladder has a reasonable house player that speaks the real protocol.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from digdown import bot as sdk
from engine.players import HeuristicPlayer, dict_actions


def main(argv: Sequence[str] | None = None) -> int:
    return sdk.house_bot_main(
        dict_actions(HeuristicPlayer), "heuristic", __doc__.splitlines()[0], argv
    )


if __name__ == "__main__":
    sys.exit(main())
