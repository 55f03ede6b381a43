"""Duplicate deals: one seed played once per seat rotation of the same table.

The cave's luck matters in Digging Down. Playing one dealt cave n times with
the n seats rotated gives every bot every seat of that cave, so a bot's result
over the set measures the bot, not the deal (duplicate bridge's idea).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def rotations(table: Sequence[T]) -> list[list[T]]:
    """The n cyclic rotations of a table: in rotation r, seat s holds table[(s - r) mod n].

    Each entry sits in each seat exactly once, and the cyclic order around the
    table (who plays after whom) is the same in every rotation.
    """
    n = len(table)
    return [[table[(s - r) % n] for s in range(n)] for r in range(n)]
