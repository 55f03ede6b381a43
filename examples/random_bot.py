"""The random bot over gRPC: `python -m examples.random_bot --listen 127.0.0.1:50061`.

Wraps engine/players' RandomPlayer (one seeded instance per game and seat), so the
ladder always has a floor opponent that speaks the real protocol.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from digdown import bot as sdk
from engine.players import RandomPlayer, dict_actions


def main(argv: Sequence[str] | None = None) -> int:
    return sdk.house_bot_main(dict_actions(RandomPlayer), "random", __doc__.splitlines()[0], argv)


if __name__ == "__main__":
    sys.exit(main())
