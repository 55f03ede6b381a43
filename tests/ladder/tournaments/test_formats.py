"""Round robin, Swiss, duplicate rotations, standings, version comparison, auto-suspend."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ladder.finishing.suspension_rules import SeatRecord, SuspendPolicy, suspension_reason
from ladder.tournaments.comparison import DealRanks, compare
from ladder.tournaments.formats import round_robin, swiss_pairing, swiss_rounds
from ladder.tournaments.rotations import rotations
from ladder.tournaments.standings import Outcome, standings


@given(st.lists(st.integers(), min_size=2, max_size=4, unique=True))
def test_rotations_put_every_entry_in_every_seat_once(table) -> None:
    rots = rotations(table)
    assert len(rots) == len(table)
    for seat in range(len(table)):
        assert sorted(r[seat] for r in rots) == sorted(table)


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 7), st.integers(2, 4), st.booleans())
def test_round_robin_plays_every_group_with_balanced_seats(n, seats, duplicate) -> None:
    if n < seats:
        with pytest.raises(ValueError):
            round_robin(list(range(n)), seats)
        return
    plan = round_robin(list(range(n)), seats, duplicate=duplicate)
    groups = Counter(frozenset(m.seats) for m in plan)
    assert set(groups) == {frozenset(g) for g in itertools.combinations(range(n), seats)}
    assert set(groups.values()) == {seats if duplicate else 1}
    per_seat = Counter((b, s) for m in plan for s, b in enumerate(m.seats))
    for b in range(n):
        counts = [per_seat[(b, s)] for s in range(seats)]
        assert max(counts) - min(counts) <= (0 if duplicate else 1), (b, counts)
    if duplicate:
        deals = Counter(m.deal for m in plan)
        assert set(deals.values()) == {seats}


def play_swiss(n: int, rounds: int, seed: int):
    rng = random.Random(seed)
    order = list(range(n))
    points: Counter[int] = Counter()
    played: set[frozenset[int]] = set()
    byes: list[int] = []
    balance: Counter[int] = Counter()
    history = []
    for _ in range(rounds):
        rnd = swiss_pairing(order, points, played, byes, balance, rng)
        history.append(rnd)
        if rnd.bye is not None:
            byes.append(rnd.bye)
            points[rnd.bye] += 1
        for a, b in rnd.pairs:
            balance[a] += 1
            balance[b] -= 1
            played.add(frozenset((a, b)))
            points[rng.choice((a, b))] += 1
    return history, byes, balance


@pytest.mark.parametrize("n", [2, 5, 8, 9, 16])
def test_swiss_pairs_everyone_once_a_round_without_rematches(n) -> None:
    rounds = swiss_rounds(n) if n > 2 else 1
    for seed in range(20):
        history, byes, balance = play_swiss(n, rounds, seed)
        seen: set[frozenset[int]] = set()
        for rnd in history:
            seated = [b for p in rnd.pairs for b in p] + ([rnd.bye] if rnd.bye is not None else [])
            assert sorted(seated) == list(range(n))
            for pair in map(frozenset, rnd.pairs):
                assert pair not in seen, "rematch"
                seen.add(pair)
        assert len(byes) == len(set(byes)), "a second bye while others had none"
        assert all(abs(balance[b]) <= 2 for b in range(n)), balance


def test_swiss_round_count() -> None:
    assert [swiss_rounds(n) for n in (2, 3, 4, 5, 8, 9, 16, 17)] == [1, 2, 2, 3, 3, 4, 4, 5]


def test_standings_by_hand_with_forfeits_errors_and_tie_breaks() -> None:
    # Four bots, 2-seat round robin; ranks as the engine reports them (a forfeit ranks last).
    outcomes = [
        Outcome((1, 2), (1, 2)),  # 1 beats 2
        Outcome((3, 4), (2, 1)),  # 4 beats 3 (3 forfeited)
        Outcome((1, 3), (2, 1)),  # 3 beats 1
        Outcome((2, 4), (1, 1)),  # tie
        Outcome((1, 4), (1, 2)),  # 1 beats 4
        Outcome((2, 3), None),  # errored: nobody scores
    ]
    rows = standings([1, 2, 3, 4], outcomes)
    got = [(r.bot, r.rank, r.points, r.played, r.errored) for r in rows]
    # 1: 2 pts; 4: 1.5; 2: 0.5 (loss, tie); 3: 1 (loss, win) -> 1, 4, 3, 2.
    assert got == [(1, 1, 2.0, 3, 0), (4, 2, 1.5, 3, 0), (3, 3, 1.0, 2, 1), (2, 4, 0.5, 2, 1)]


def test_head_to_head_breaks_a_tie_and_full_ties_share_a_rank() -> None:
    outcomes = [Outcome((1, 2), (1, 2)), Outcome((2, 3), (1, 2)), Outcome((3, 1), (1, 2))]
    rows = standings([1, 2, 3], outcomes)
    assert {r.rank for r in rows} == {1}  # a cycle: all equal on every tie-break
    outcomes.append(Outcome((1, 4), (1, 2)))
    outcomes.append(Outcome((4, 2), (1, 2)))
    rows = standings([1, 2, 3, 4], outcomes)
    # 1 and 2... 1 has 2 pts, 2 has 1, 3 has 1, 4 has 1: among 2, 3, 4 head-to-head:
    # 2 beat 3, 3 beat nobody of them? (3 beat 1), 4 beat 2 -> h2h 2:1, 3:0, 4:1 -> 2 and 4 tie.
    assert [(r.bot, r.rank) for r in rows] == [(1, 1), (2, 2), (4, 2), (3, 4)]


def test_multi_seat_points_are_pairwise_and_buchholz_counts_opponents() -> None:
    rows = standings([1, 2, 3, 4], [Outcome((4, 3, 2, 1), (1, 2, 3, 4))], swiss=True)
    assert [(r.bot, r.points, r.buchholz) for r in rows] == [
        (4, 3.0, 3.0),
        (3, 2.0, 4.0),
        (2, 1.0, 5.0),
        (1, 0.0, 6.0),
    ]


def test_standings_do_not_depend_on_the_order_of_outcomes() -> None:
    rng = random.Random(3)
    outcomes = [
        Outcome(m.seats, tuple(rng.sample(range(1, 3), 2))) for m in round_robin(range(6), 2)
    ]
    first = [(r.bot, r.rank, r.points) for r in standings(range(6), outcomes)]
    rng.shuffle(outcomes)
    assert [(r.bot, r.rank, r.points) for r in standings(range(6), outcomes)] == first


def test_version_comparison_states_the_difference_and_its_interval() -> None:
    old = [DealRanks((1, 2, 2, 2)), DealRanks((2, 2, 2, 2)), DealRanks((1, 1, 2, 2))]
    new = [DealRanks((1, 1, 2, 2)), DealRanks((1, 2, 2, 2)), DealRanks((1, 1, 1, 2))]
    result = compare(old, new)
    assert result.deals == 3
    assert result.first_share_diff.mean == pytest.approx(0.25)
    # diffs 0.25, 0.25, 0.25: no spread -> a zero-width interval that excludes 0
    assert result.first_share_diff.low == pytest.approx(0.25)
    assert result.first_share_diff.excludes_zero
    assert result.summary("v1", "v2").startswith(
        "v2 - v1: +0.25 rank-1 share, 95% CI [+0.25, +0.25]"
    )
    noisy = compare(
        old, [DealRanks((2, 2, 2, 2)), DealRanks((1, 1, 2, 2)), DealRanks((1, 2, 2, 2))]
    )
    assert not noisy.first_share_diff.excludes_zero
    with pytest.raises(ValueError):
        compare(old[:1], new[:1])


def test_suspension_thresholds() -> None:
    policy = SuspendPolicy(window=10, max_forfeits=5, consecutive_forfeits=3, max_faults=20)
    ok = SeatRecord(forfeited=False, faults=0)
    dead = SeatRecord(forfeited=True, faults=0, reason="dead bot")
    assert suspension_reason([], policy) is None
    assert suspension_reason([dead, dead, ok, ok], policy) is None
    assert suspension_reason([dead, dead, dead, ok], policy) == (
        "forfeited its last 3 matches (last: dead bot)"
    )
    spread = [dead, ok] * 5
    assert (
        suspension_reason(spread, policy) == "forfeited 5 of its last 10 matches (last: dead bot)"
    )
    assert suspension_reason([ok] * 10 + [dead] * 10, policy) is None  # outside the window
    faulty = [SeatRecord(forfeited=False, faults=2)] * 10
    assert suspension_reason(faulty, policy) == "made 20 faults in its last 10 matches"
