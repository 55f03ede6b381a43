"""Tournament schedules as pure functions: round robin (any seat count) and Swiss (2 seats).

The services turn these plans into matches; standings live in
``ladder.tournaments.standings``. No Django, no clock, no global RNG.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ladder.tournaments.rotations import rotations


@dataclass(frozen=True)
class PlannedMatch:
    """One match of a schedule: bot ids in seat order; matches sharing ``deal`` share a seed."""

    seats: tuple[int, ...]
    deal: int | None = None


def round_robin(
    participants: Sequence[int], seats: int, *, duplicate: bool = False
) -> list[PlannedMatch]:
    """Every group of ``seats`` participants plays.

    With ``duplicate`` each group plays one deal in every seat rotation (so every
    bot plays every seat of the same cave). Without it each group plays once and
    the seat order is chosen greedily so that each bot's seat counts stay level:
    over the schedule no bot sits in any seat more than needed.
    """
    if seats < 2:
        raise ValueError("a match needs at least two seats")
    if len(set(participants)) != len(participants):
        raise ValueError("participants must be distinct")
    if len(participants) < seats:
        raise ValueError(f"{seats}-seat round robin needs at least {seats} participants")
    plan: list[PlannedMatch] = []
    used: Counter[tuple[int, int]] = Counter()  # (bot, seat) -> times
    for deal, group in enumerate(itertools.combinations(participants, seats)):
        if duplicate:
            plan.extend(PlannedMatch(tuple(order), deal) for order in rotations(group))
            continue
        best = min(
            itertools.permutations(group),
            key=lambda order: sorted((used[(bot, s)] for s, bot in enumerate(order)), reverse=True),
        )
        for s, bot in enumerate(best):
            used[(bot, s)] += 1
        plan.append(PlannedMatch(tuple(best)))
    return plan


def swiss_rounds(participants: int) -> int:
    """The usual number of Swiss rounds: enough to separate a single winner (⌈log2 n⌉)."""
    return max(1, (participants - 1).bit_length())


@dataclass(frozen=True)
class SwissRound:
    """The pairings of one Swiss round (seat 0, seat 1) and the bot given a bye, if any."""

    pairs: list[tuple[int, int]]
    bye: int | None


def swiss_pairing(
    order: Sequence[int],
    points: Mapping[int, float],
    played: Collection[frozenset[int]],
    byes: Collection[int],
    seat_balance: Mapping[int, int],
    rng: random.Random,
) -> SwissRound:
    """Pair the next Swiss round: no rematch, players with equal points together.

    ``order`` is the initial ranking (e.g. by rating) used to break ties in
    points. With an odd count, the lowest-ranked player without a bye sits out
    (and scores a win). Pairing goes top-down: the best unpaired player meets
    the next-best one it has not met, backtracking when the rest cannot be
    paired; only when no rematch-free pairing exists at all are rematches
    allowed. ``seat_balance`` is each player's seat-0 games minus seat-1 games;
    within a pair the lower balance gets seat 0 (ties at random), as chess
    Swiss systems alternate colours, and two players who both lean two games
    the same way are not paired if any other pairing avoids it.
    """
    ranked = sorted(order, key=lambda b: (-points.get(b, 0.0), order.index(b)))
    bye = None
    if len(ranked) % 2:
        bye = next((b for b in reversed(ranked) if b not in byes), ranked[-1])
        ranked.remove(bye)
    met = {frozenset(p) for p in played}
    # Two players who both need the same seat (|balance| >= 2, same side) are
    # kept apart when possible, so nobody drifts three games off balance.
    clash = {
        frozenset((a, b))
        for a, b in itertools.combinations(ranked, 2)
        if abs(seat_balance.get(a, 0) + seat_balance.get(b, 0)) >= 4
    }
    pairs = _pair(ranked, met | clash) or _pair(ranked, met) or _pair(ranked, set())
    assert pairs is not None  # without any rule every even list pairs
    seated = []
    for a, b in pairs:
        ca, cb = seat_balance.get(a, 0), seat_balance.get(b, 0)
        first = a if ca < cb else b if cb < ca else rng.choice((a, b))
        seated.append((first, b if first == a else a))
    return SwissRound(seated, bye)


def _pair(ranked: list[int], met: set[frozenset[int]]) -> list[tuple[int, int]] | None:
    if not ranked:
        return []
    top, rest = ranked[0], ranked[1:]
    for i, other in enumerate(rest):
        if frozenset((top, other)) in met:
            continue
        tail = _pair(rest[:i] + rest[i + 1 :], met)
        if tail is not None:
            return [(top, other), *tail]
    return None
