"""What an arena run says about the author's bot, with 95% intervals.

Per opponent line-up: the share of games at rank 1 (ties included), the mean
rank and the mean loot points, each with a 95% interval; faults, timeouts and
forfeits; think-time percentiles over every decision the bot was asked.

Intervals: without duplicate deals every game is an independent sample, so the
rank-1 share gets Wilson's score interval (good near 0% and 100%) and the means
the normal interval. With duplicate deals the rotations of one deal share its
cave and are not independent: the unit is then the deal (the mean over its
rotations), and every interval is the normal interval over deals — the honest,
and usually narrower, one, since the luck of the deal cancels within it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from engine.arena.play import GameRow

Z95 = 1.959964


def wilson(successes: int, n: int) -> tuple[float, float]:
    """Wilson's 95% score interval of a proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denom
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return (low, high)


def mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and its normal 95% interval (the sample standard deviation over √n)."""
    n = len(values)
    if n == 0:
        return (0.0, 0.0, 0.0)
    mean = sum(values) / n
    if n < 2:
        return (mean, mean, mean)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = Z95 * sd / math.sqrt(n)
    return (mean, mean - half, mean + half)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of already sorted values (0 when there are none)."""
    if not sorted_values:
        return 0.0
    k = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[k]


@dataclass
class LineupStats:
    """The author's bot against one opponent line-up."""

    opponents: list[str]
    seats: int
    games: int
    units: int  # independent samples: games, or deals with duplicate deals
    rank1: float
    rank1_low: float
    rank1_high: float
    mean_rank: float
    mean_rank_low: float
    mean_rank_high: float
    points: float
    points_low: float
    points_high: float
    faults: int
    timeouts: int
    forfeits: int
    games_with_faults: int
    decisions: int
    think_ms: dict[str, float]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _units(rows: Sequence[GameRow], duplicate: bool) -> list[list[GameRow]]:
    if not duplicate:
        return [[r] for r in rows]
    deals: dict[int, list[GameRow]] = defaultdict(list)
    for r in rows:
        deals[r.seed].append(r)
    return list(deals.values())


def _clip(m: tuple[float, float, float], low: float, high: float) -> tuple[float, float, float]:
    return (m[0], max(low, m[1]), min(high, m[2]))


def think_summary(values: list[float]) -> dict[str, float]:
    ms = sorted(values)
    return {
        "p50": percentile(ms, 0.50),
        "p90": percentile(ms, 0.90),
        "p99": percentile(ms, 0.99),
        "max": ms[-1] if ms else 0.0,
        "mean": sum(ms) / len(ms) if ms else 0.0,
    }


def lineup_stats(opponents: Sequence[str], rows: Sequence[GameRow], duplicate: bool) -> LineupStats:
    units = _units(rows, duplicate)
    firsts = [sum(r.rank == 1 for r in u) / len(u) for u in units]
    ranks = [sum(r.rank for r in u) / len(u) for u in units]
    points = [sum(r.loot_points for r in u) / len(u) for u in units]
    if duplicate:
        share, low, high = mean_interval(firsts)
        low, high = max(0.0, low), min(1.0, high)
    else:
        wins = sum(r.rank == 1 for r in rows)
        share = wins / len(rows) if rows else 0.0
        low, high = wilson(wins, len(rows))
    # Clipped to what the quantity can be (a normal interval knows no bounds).
    mr = _clip(mean_interval(ranks), 1.0, float(len(opponents) + 1))
    pts = _clip(mean_interval(points), 0.0, math.inf)
    think = [ms for r in rows for ms in r.think_ms]
    return LineupStats(
        opponents=list(opponents),
        seats=len(opponents) + 1,
        games=len(rows),
        units=len(units),
        rank1=share,
        rank1_low=low,
        rank1_high=high,
        mean_rank=mr[0],
        mean_rank_low=mr[1],
        mean_rank_high=mr[2],
        points=pts[0],
        points_low=pts[1],
        points_high=pts[2],
        faults=sum(r.faults for r in rows),
        timeouts=sum(r.timeouts for r in rows),
        forfeits=sum(r.ended == "forfeited" for r in rows),
        games_with_faults=sum(bool(r.fault_reasons) for r in rows),
        decisions=len(think),
        think_ms=think_summary(think),
    )


def summarise(
    lineups: Sequence[Sequence[str]], rows: Sequence[GameRow], duplicate: bool
) -> list[LineupStats]:
    """One `LineupStats` per opponent line-up, in the order given."""
    by: dict[int, list[GameRow]] = defaultdict(list)
    for r in rows:
        by[r.lineup].append(r)
    return [lineup_stats(opp, by[i], duplicate) for i, opp in enumerate(lineups)]


def format_lineup(s: LineupStats) -> str:
    t = s.think_ms
    unit = f"{s.units} deals" if s.units != s.games else f"{s.games} games"
    lines = [
        f"vs {', '.join(s.opponents)} ({s.seats} seats, {s.games} games, intervals over {unit})",
        f"  rank-1 share {s.rank1:6.1%}   95% [{s.rank1_low:.1%}, {s.rank1_high:.1%}]"
        f"   (a seat's fair share is {1 / s.seats:.1%})",
        f"  mean rank    {s.mean_rank:6.2f}   95% [{s.mean_rank_low:.2f}, {s.mean_rank_high:.2f}]",
        f"  loot points  {s.points:6.2f}   95% [{s.points_low:.2f}, {s.points_high:.2f}]",
        f"  faults {s.faults} (timeouts {s.timeouts}) in {s.games_with_faults} games,"
        f" forfeits {s.forfeits}",
        f"  think time over {s.decisions} decisions: p50 {t['p50']:.2f} ms, p90 {t['p90']:.2f} ms,"
        f" p99 {t['p99']:.2f} ms, max {t['max']:.1f} ms",
    ]
    return "\n".join(lines)
