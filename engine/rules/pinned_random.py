"""The pinned random procedure of rules §2.6.

Only `random.Random(seed).random()` is used, because it is the one call whose
sequence Python guarantees across versions; the shuffle is written out so
every implementation deals the same cave from the same seed. The generator is
a local instance: the library never touches the global RNG.
"""

from __future__ import annotations

import random
from typing import TypeVar

T = TypeVar("T")
MAX_SEED = 2**63


def make_rng(seed: int) -> random.Random:
    if not 0 <= seed < MAX_SEED:
        raise ValueError(f"seed must be an integer with 0 <= seed < 2^63, got {seed}")
    return random.Random(seed)


def fisher_yates(items: list[T], rng: random.Random) -> list[T]:
    """Shuffle in place: for i from len-1 down to 1, j = int(random() * (i+1)), swap i and j."""
    for i in range(len(items) - 1, 0, -1):
        j = int(rng.random() * (i + 1))
        items[i], items[j] = items[j], items[i]
    return items


def draw_index(n: int, rng: random.Random) -> int:
    return int(rng.random() * n)
