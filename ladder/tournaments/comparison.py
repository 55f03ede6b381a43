"""Is version B better than version A? Paired statistics over duplicate deals.

Both versions play the same deals (same seed, same opponents, every seat
rotation), so each deal gives one paired difference and the deal's luck
cancels. The answer is the mean difference with a 95 % confidence interval
from Student's t over the deals — stated plainly, e.g.
``v3 - v2: +0.08 rank-1 share, 95% CI [+0.02, +0.14] over 120 deals``.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

# Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom; 1.96 beyond.
_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t95(df: int) -> float:
    if df < 1:
        raise ValueError("need at least two deals for an interval")
    return _T95[df - 1] if df <= len(_T95) else 1.96


@dataclass(frozen=True)
class DealRanks:
    """The ranks one version took in the rotations of one deal."""

    ranks: Sequence[int]

    @property
    def first_share(self) -> float:
        return sum(r == 1 for r in self.ranks) / len(self.ranks)

    @property
    def mean_rank(self) -> float:
        return statistics.fmean(self.ranks)


@dataclass(frozen=True)
class Estimate:
    """A mean difference (new minus old) and its 95 % interval."""

    mean: float
    low: float
    high: float

    @property
    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


@dataclass(frozen=True)
class Comparison:
    deals: int
    old_first_share: float
    new_first_share: float
    old_mean_rank: float
    new_mean_rank: float
    first_share_diff: Estimate
    mean_rank_diff: Estimate

    def summary(self, old: str, new: str) -> str:
        d = self.first_share_diff
        r = self.mean_rank_diff
        return (
            f"{new} - {old}: {d.mean:+.2f} rank-1 share, 95% CI [{d.low:+.2f}, {d.high:+.2f}]; "
            f"{r.mean:+.2f} mean rank, 95% CI [{r.low:+.2f}, {r.high:+.2f}] "
            f"over {self.deals} deals"
        )


def paired_estimate(diffs: Sequence[float]) -> Estimate:
    mean = statistics.fmean(diffs)
    half = t95(len(diffs) - 1) * statistics.stdev(diffs) / math.sqrt(len(diffs))
    return Estimate(mean, mean - half, mean + half)


def compare(old: Sequence[DealRanks], new: Sequence[DealRanks]) -> Comparison:
    """Compare two versions over the same deals, in the same order (deal i of each)."""
    if len(old) != len(new):
        raise ValueError("both versions must have played the same deals")
    if len(old) < 2:
        raise ValueError("need at least two complete deals")
    return Comparison(
        deals=len(old),
        old_first_share=statistics.fmean(d.first_share for d in old),
        new_first_share=statistics.fmean(d.first_share for d in new),
        old_mean_rank=statistics.fmean(d.mean_rank for d in old),
        new_mean_rank=statistics.fmean(d.mean_rank for d in new),
        first_share_diff=paired_estimate(
            [n.first_share - o.first_share for o, n in zip(old, new, strict=True)]
        ),
        mean_rank_diff=paired_estimate(
            [n.mean_rank - o.mean_rank for o, n in zip(old, new, strict=True)]
        ),
    )
