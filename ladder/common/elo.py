"""Multiplayer Elo by pairwise decomposition, in integer hundredths of a point.

Pure math with no Django import, so the recording service, the ``rerate`` command
and the property tests all run the very same function. It sits in ``ladder.common``,
the bottom layer, because every app shows ratings on this scale (points, intervals,
the provisional rule) and the recording in ``ladder.matches`` rates with it.

Model
-----
A match of n seats is treated as n(n-1)/2 two-player games. Seat i scores 1
against every seat it out-ranked (lower rank number), ½ against every seat with
the same rank and 0 against the others. Against seat j its expected score is the
logistic ``E = 1 / (1 + 10 ** ((R_j - R_i) / 400))``. The change of seat i is

    delta_i = K / (n - 1) * sum_j (S_ij - E_ij)

Each pair's contribution is added to one seat and subtracted from the other, so
the float deltas sum to zero; they are then rounded to integer hundredths with a
*zero-sum* largest-remainder rounding, so stored ratings (integers) conserve
their sum exactly when every seat uses the same K. For n = 2 this is standard
Elo.

Uncertainty (documented here because it is a modelling choice, not a fact):
under the logistic model, one game against an equal opponent carries Fisher
information ``(ln 10 / 400)**2 * p * (1 - p)`` with ``p = ½`` about a rating.
After g games the standard error is therefore about ``(400 / ln 10) / (0.5 * sqrt(g))
≈ 347 / sqrt(g)`` points and the 95 % interval is ``rating ± 1.96 * that ≈ ±681 /
sqrt(g)``. A multiplayer game is counted as one game (its pairwise comparisons are
not independent), which keeps the interval conservative.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCALE = 100
"""Ratings are stored as integer hundredths of an Elo point."""

DEFAULT_START = 1500 * SCALE
DEFAULT_K = 32.0
Z95 = 1.96
SE_PER_GAME = 400.0 / math.log(10) / 0.5
"""Standard error (points) after one game between equal opponents: ≈ 347.4."""


def points(hundredths: int) -> float:
    """A stored rating (or change) in Elo points, as every interface shows it."""
    return hundredths / SCALE


def expected(rating_a: int, rating_b: int) -> float:
    """Expected score of A against B; ratings in hundredths."""
    return 1.0 / (1.0 + 10.0 ** ((rating_b - rating_a) / (400.0 * SCALE)))


def pair_score(rank_a: int, rank_b: int) -> float:
    """1 for a better (smaller) rank, ½ for a tie, 0 for a worse rank."""
    if rank_a < rank_b:
        return 1.0
    if rank_a == rank_b:
        return 0.5
    return 0.0


def raw_deltas(ratings: Sequence[int], ranks: Sequence[int], k: float) -> list[float]:
    """Float deltas in hundredths (they sum to zero up to float rounding)."""
    n = len(ratings)
    if n != len(ranks):
        raise ValueError("ratings and ranks differ in length")
    if n < 2:
        raise ValueError("a rated match needs at least two seats")
    k_pair = k * SCALE / (n - 1)
    out = [0.0] * n
    for i in range(n):
        for j in range(i + 1, n):
            change = k_pair * (pair_score(ranks[i], ranks[j]) - expected(ratings[i], ratings[j]))
            out[i] += change
            out[j] -= change
    return out


def round_zero_sum(values: Sequence[float]) -> list[int]:
    """Round to integers whose sum is exactly zero (largest remainder).

    Floors every value, then gives +1 to the values with the largest fractional
    part until the sum is zero; ties go to the lower index. A value never moves
    past its ceiling, so a positive delta never becomes negative and a negative
    one never becomes positive.
    """
    floors = [math.floor(v) for v in values]
    missing = -sum(floors)
    if not 0 <= missing <= len(values):
        raise ValueError(f"values do not sum to zero: {sum(values)!r}")
    order = sorted(range(len(values)), key=lambda i: (-(values[i] - floors[i]), i))
    for i in order[:missing]:
        floors[i] += 1
    return floors


def rate(ratings: Sequence[int], ranks: Sequence[int], k: float = DEFAULT_K) -> list[int]:
    """Integer deltas (hundredths) for one match; they always sum to zero."""
    return round_zero_sum(raw_deltas(ratings, ranks, k))


def interval95(rating: int, games: int) -> tuple[int, int] | None:
    """95 % interval (hundredths) of the simple model above; None before any game."""
    if games <= 0:
        return None
    half = round(Z95 * SE_PER_GAME / math.sqrt(games) * SCALE)
    return rating - half, rating + half


@dataclass(frozen=True)
class Uncertainty:
    """How sure a rating is: games played, provisional flag, 95 % interval in points."""

    games: int
    provisional: bool
    interval95: tuple[float, float] | None


def uncertainty(rating: int, games: int, *, provisional_below: int) -> Uncertainty:
    """The rating's uncertainty; provisional while fewer than ``provisional_below`` games."""
    iv = interval95(rating, games)
    return Uncertainty(
        games=games,
        provisional=games < provisional_below,
        interval95=None if iv is None else (points(iv[0]), points(iv[1])),
    )


def sigma_uncertainty(
    rating: int, sigma: int, games: int, *, provisional_above: int, min_games: int = 0
) -> Uncertainty:
    """The uncertainty of any system's rating (hundredths): the 95 % interval mu ± 1.96 sigma
    (None before any game) and provisional while fewer than ``min_games`` games or sigma
    above ``provisional_above`` (``provisional``)."""
    flag = provisional(sigma, games, provisional_above=provisional_above, min_games=min_games)
    if games <= 0:
        return Uncertainty(games=games, provisional=flag, interval95=None)
    half = round(Z95 * sigma)
    return Uncertainty(
        games=games,
        provisional=flag,
        interval95=(points(rating - half), points(rating + half)),
    )


def provisional(sigma: int, games: int, *, provisional_above: int, min_games: int) -> bool:
    """The one rule of every system: a rating is provisional while it has fewer than
    ``min_games`` games or its sigma (hundredths) is above ``provisional_above``.

    Under Elo, sigma follows the games (``sigma_after``) and is below the default
    threshold from its 8th game, so the games decide: its first 9 games, as always. The
    Weng-Lin systems' sigma is their own; the threshold is where ``bench/ratings_bench.py``
    shows their ratings have settled (docs/ratings.md)."""
    return games < min_games or sigma > provisional_above


def sigma_after(games: int) -> int:
    """This model's standard error after ``games`` games, in hundredths (one game's for none)."""
    return round(SE_PER_GAME / math.sqrt(max(games, 1)) * SCALE)


DEFAULT_PROVISIONAL_SIGMA = 13500
"""Sigma (hundredths) above which a rating is provisional by default: 135 points, a 95 %
interval wider than ± 265 points (chosen with ``bench/ratings_bench.py``: docs/ratings.md)."""


def provisional_threshold(override: int | None) -> int:
    """Sigma (hundredths) above which a rating is provisional: ``override`` when set, else
    ``DEFAULT_PROVISIONAL_SIGMA``."""
    return int(override) if override is not None else DEFAULT_PROVISIONAL_SIGMA
