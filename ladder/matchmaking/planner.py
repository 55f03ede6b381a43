"""Who plays whom next: the ladder's matchmaker as a pure function.

No Django, no clock, no global RNG: the service reads the candidates from the
database, calls ``plan_sets`` (tables, some as duplicate sets; ``plan_tables``
for plain tables) with its own seeded ``random.Random`` and creates the
matches. That keeps the decisions testable over thousands of simulated rounds
(tests/ladder/matchmaking/test_planner.py).

How a table is built (what it guards against: starvation, top bots never
meeting, the same two opponents forever, same-owner collusion, seat bias):

1. The *anchor* is the eligible bot with the fewest recent games (ties broken
   at random), so a new or late bot is served first until it has caught up.
2. The seat count is drawn from the configured mix, shrunk when fewer
   eligible owners are left than seats.
3. Each further seat is drawn among eligible bots of owners not yet at the
   table, with a weight that falls with the rating gap to the anchor
   (``exp(-gap / rating_scale)``) and rises with the bot's games deficit, plus
   a floor so that any two bots can meet. Near opponents are likely, far ones
   possible: over time everyone meets everyone.
4. The seat order is shuffled: every bot sits in every seat about equally often.

A bot is never planned into more than ``max_concurrent`` matches at once,
counting the matches it is already in.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Candidate:
    """A bot the matchmaker may seat: playable, active, not retired."""

    bot_id: int
    owner_id: int
    rating: float  # points, not hundredths
    recent_games: int = 0
    active_matches: int = 0


@dataclass(frozen=True)
class PlannerConfig:
    """The knobs of the matchmaker (settings ``LADDER_MATCHMAKING_*``)."""

    seat_mix: Mapping[int, float] = field(default_factory=lambda: {2: 0.5, 3: 0.25, 4: 0.25})
    max_concurrent: int = 2
    rating_scale: float = 200.0  # points: the weight of an opponent 200 points away is 1/e
    deficit_scale: float = 2.0  # games: a bot 2 games behind weighs e times more
    floor: float = 0.05  # minimum weight, so that any two bots can meet

    def __post_init__(self) -> None:
        if not self.seat_mix or any(n < 2 or w < 0 for n, w in self.seat_mix.items()):
            raise ValueError("seat_mix needs seat counts >= 2 with non-negative weights")
        if sum(self.seat_mix.values()) <= 0:
            raise ValueError("seat_mix weights must not all be zero")
        if self.max_concurrent < 1:
            raise ValueError("max_concurrent must be at least 1")


def parse_seat_mix(text: str) -> dict[int, float]:
    """``"2:2,3:1,4:1"`` or ``"2,3,4"`` (equal weights) -> {seats: weight}."""
    mix: dict[int, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        seats, _, weight = part.partition(":")
        mix[int(seats)] = float(weight) if weight else 1.0
    if not mix:
        raise ValueError(f"empty seat mix: {text!r}")
    return mix


@dataclass(frozen=True)
class PlannedTable:
    """One planned table: bot ids in seat order, played once or as a duplicate set."""

    bots: list[int]
    duplicate: bool = False

    @property
    def matches(self) -> int:
        """Matches it makes: one, or one per seat rotation for a duplicate set."""
        return len(self.bots) if self.duplicate else 1


def plan_tables(
    candidates: Sequence[Candidate],
    count: int,
    rng: random.Random,
    config: PlannerConfig | None = None,
) -> list[list[int]]:
    """Up to ``count`` tables, each a list of bot ids in seat order.

    Fewer tables come back when the eligible bots run out (fewer than two
    owners left with a free slot). The input is not modified.
    """
    return [t.bots for t in plan_sets(candidates, count, rng, config)]


def plan_sets(
    candidates: Sequence[Candidate],
    count: int,
    rng: random.Random,
    config: PlannerConfig | None = None,
    duplicate_share: float = 0.0,
) -> list[PlannedTable]:
    """Tables making up to ``count`` matches; about ``duplicate_share`` of them duplicate sets.

    A duplicate set of n seats is n matches (every seat rotation of one cave),
    so each of its bots is in n matches at once and gets n games: it is only
    drawn with a seat count that fits both the matches still wanted and every
    seated bot's ``max_concurrent``; otherwise the table is played once. With
    ``duplicate_share`` 0 no random number is spent on it, so the plan is the
    same as ``plan_tables``'.
    """
    config = config or PlannerConfig()
    games = {c.bot_id: c.recent_games for c in candidates}
    busy = {c.bot_id: c.active_matches for c in candidates}
    tables: list[PlannedTable] = []
    planned = 0
    while planned < count:
        duplicate = duplicate_share > 0 and rng.random() < duplicate_share
        table = None
        if duplicate and count - planned >= 2:
            table = _draw_table(candidates, games, busy, rng, config, count - planned)
        if table is None:
            duplicate = False
            table = _draw_table(candidates, games, busy, rng, config, 1)
        if table is None:
            break
        n = len(table) if duplicate else 1
        for c in table:
            games[c.bot_id] += n
            busy[c.bot_id] += n
        tables.append(PlannedTable([c.bot_id for c in table], duplicate))
        planned += n
    return tables


def _draw_table(
    candidates: Sequence[Candidate],
    games: Mapping[int, int],
    busy: Mapping[int, int],
    rng: random.Random,
    config: PlannerConfig,
    room: int,
) -> list[Candidate] | None:
    """One shuffled table, or None when it cannot be filled.

    ``room`` 1 is a single match; above 1 a duplicate set of at most ``room``
    seats, each seated bot needing as many free slots as the set has seats.
    """
    if room == 1:
        mix: Mapping[int, float] = config.seat_mix
        free = [c for c in candidates if busy[c.bot_id] < config.max_concurrent]
    else:
        mix = {n: w for n, w in config.seat_mix.items() if n <= room}
        # The smallest set: every bot of it needs that many free slots.
        need = min(mix, default=0)
        free = [c for c in candidates if busy[c.bot_id] + need <= config.max_concurrent]
        if not mix:
            return None
    owners = {c.owner_id for c in free}
    if len(owners) < 2:
        return None
    if room == 1:
        seats = _draw_seats(mix, len(owners), rng)
    else:
        fit = {
            n: w
            for n, w in mix.items()
            if n <= len({c.owner_id for c in free if busy[c.bot_id] + n <= config.max_concurrent})
        }
        if not fit:
            return None
        seats = _draw_seats(fit, len(owners), rng)
        free = [c for c in free if busy[c.bot_id] + seats <= config.max_concurrent]
        if len({c.owner_id for c in free}) < seats:
            return None
    fewest = min(games[c.bot_id] for c in free)
    anchor = rng.choice([c for c in free if games[c.bot_id] == fewest])
    table = [anchor]
    while len(table) < seats:
        taken = {c.owner_id for c in table}
        pool = [c for c in free if c.owner_id not in taken]
        weights = [_weight(anchor, c, games, fewest, config) for c in pool]
        table.append(rng.choices(pool, weights=weights)[0])
    rng.shuffle(table)
    return table


def _draw_seats(mix: Mapping[int, float], owners: int, rng: random.Random) -> int:
    """A seat count from the mix among those that ``owners`` distinct owners can fill."""
    options = [(n, w) for n, w in sorted(mix.items()) if n <= owners and w > 0]
    if not options:
        return min(owners, min(mix))
    return rng.choices([n for n, _ in options], weights=[w for _, w in options])[0]


def _weight(
    anchor: Candidate,
    other: Candidate,
    games: Mapping[int, int],
    fewest: int,
    config: PlannerConfig,
) -> float:
    closeness = math.exp(-abs(other.rating - anchor.rating) / config.rating_scale)
    behind = max(0, games[other.bot_id] - fewest)
    catch_up = math.exp(-behind / config.deficit_scale)
    return config.floor + closeness * catch_up
