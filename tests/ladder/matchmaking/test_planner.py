"""The matchmaker's properties, on thousands of simulated rounds with random results."""

from __future__ import annotations

import random
from collections import Counter, defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from ladder.common import elo
from ladder.matchmaking.planner import (
    Candidate,
    PlannerConfig,
    parse_seat_mix,
    plan_sets,
    plan_tables,
)

candidates = st.lists(
    st.builds(
        Candidate,
        bot_id=st.integers(0, 10_000),
        owner_id=st.integers(0, 6),
        rating=st.floats(800, 2400),
        recent_games=st.integers(0, 30),
        active_matches=st.integers(0, 3),
    ),
    max_size=25,
    unique_by=lambda c: c.bot_id,
)


@settings(max_examples=200, deadline=None)
@given(candidates, st.integers(0, 12), st.integers(0, 2**32), st.integers(1, 3))
def test_every_plan_is_legal(cands, count, seed, max_concurrent) -> None:
    config = PlannerConfig(max_concurrent=max_concurrent)
    tables = plan_tables(cands, count, random.Random(seed), config)
    by_id = {c.bot_id: c for c in cands}
    assert len(tables) <= count
    busy = Counter({c.bot_id: c.active_matches for c in cands})
    for table in tables:
        assert 2 <= len(table) <= 4
        assert len({by_id[b].owner_id for b in table}) == len(table), "same-owner table"
        busy.update(table)
    assert all(busy[b] <= max(max_concurrent, by_id[b].active_matches) for b in busy)
    # Stops early only when fewer than two owners have a free slot left.
    if len(tables) < count:
        free_owners = {by_id[b].owner_id for b in busy if busy[b] < max_concurrent}
        assert len(free_owners) < 2
    assert tables == plan_tables(cands, count, random.Random(seed), config)


def test_seat_mix_is_parsed_and_checked() -> None:
    assert parse_seat_mix("2:2, 3:1,4") == {2: 2.0, 3: 1.0, 4: 1.0}
    assert PlannerConfig(seat_mix=parse_seat_mix("2")).seat_mix == {2: 1.0}


def simulate(rounds: int, bots: int = 30, per_round: int = 5, late: int | None = None, seed=1):
    """A ladder of bots of known strength; every planned match finishes before the next round."""
    rng = random.Random(seed)
    owners = [b // 3 for b in range(bots)]
    strength = [rng.gauss(0, 1) for _ in range(bots)]
    rating = dict.fromkeys(range(bots), elo.DEFAULT_START)
    games: Counter[int] = Counter()
    seats: defaultdict[int, Counter[tuple[int, int]]] = defaultdict(Counter)
    met: Counter[frozenset[int]] = Counter()
    for r in range(rounds):
        joined = [b for b in range(bots) if late is None or b != late or r >= rounds // 3]
        pool = [Candidate(b, owners[b], rating[b] / elo.SCALE, games[b]) for b in joined]
        for table in plan_tables(pool, per_round, rng):
            assert len({owners[b] for b in table}) == len(table)
            finish = sorted(table, key=lambda b: -(strength[b] + rng.gauss(0, 1)))
            ranks = [finish.index(b) + 1 for b in table]
            for b, d in zip(table, elo.rate([rating[b] for b in table], ranks), strict=True):
                rating[b] += d
            for s, b in enumerate(table):
                games[b] += 1
                seats[b][(len(table), s)] += 1
            met.update(frozenset((a, b)) for a in table for b in table if a < b)
    return owners, games, seats, met


def test_game_counts_stay_close_and_everyone_meets_everyone() -> None:
    owners, games, _, met = simulate(1500)
    counts = [games[b] for b in range(30)]
    assert max(counts) - min(counts) <= 4, counts
    others = [(a, b) for a in range(30) for b in range(a + 1, 30) if owners[a] != owners[b]]
    assert all(met[frozenset(p)] > 0 for p in others)


def test_seat_positions_stay_near_uniform_for_each_bot() -> None:
    _, _, seats, _ = simulate(1500)
    for b, counter in seats.items():
        for n in (2, 3, 4):
            counts = [counter[(n, s)] for s in range(n)]
            fair = sum(counts) / n
            # ~170 4-seat games a bot: a seat off by more than 45 % of fair is beyond chance.
            assert all(abs(c - fair) <= 0.45 * fair for c in counts), (b, n, counts)


def test_a_bot_that_joins_late_catches_up() -> None:
    _, games, _, _ = simulate(1500, late=29)
    others = [games[b] for b in range(29)]
    assert min(others) - 4 <= games[29] <= max(others) + 4, (games[29], min(others))


def test_opponents_are_nearer_in_rating_than_chance() -> None:
    """Rating-near with randomness: planned pairs are closer than random pairs, not all adjacent."""
    rng = random.Random(3)
    pool = [Candidate(b, b, rng.uniform(1000, 2000)) for b in range(40)]
    by_id = {c.bot_id: c for c in pool}
    planned, chance = [], []
    for seed in range(300):
        for table in plan_tables(pool, 5, random.Random(seed), PlannerConfig(seat_mix={2: 1})):
            a, b = (by_id[i].rating for i in table)
            planned.append(abs(a - b))
            x, y = rng.sample(pool, 2)
            chance.append(abs(x.rating - y.rating))
    mean_planned = sum(planned) / len(planned)
    mean_chance = sum(chance) / len(chance)
    assert mean_planned < 0.6 * mean_chance, (mean_planned, mean_chance)
    assert max(planned) > 400, "far opponents must stay possible"


@settings(max_examples=50, deadline=None)
@given(
    st.integers(0, 2**32),
    st.integers(1, 4),
    st.sampled_from(["2", "2:2,3:1,4:1", "3,4", "4"]),
    st.integers(1, 3),
    st.integers(3, 8),
)
def test_a_busy_ladder_keeps_its_limits_with_matches_in_flight(
    seed: int, per_owner: int, mix: str, max_concurrent: int, n_owners: int
) -> None:
    """The service's loop: top up to a target each tick; matches finish in random order.

    Over 300 ticks no bot is ever in more than ``max_concurrent`` open matches, no
    table seats one owner twice, and game counts stay close.
    """
    rng = random.Random(seed)
    # Owners of equal size: a table seats one bot per owner at most, so an owner
    # with more bots than the others spreads fewer seats over them (by design).
    bots = n_owners * per_owner
    owners = [b % n_owners for b in range(bots)]
    config = PlannerConfig(seat_mix=parse_seat_mix(mix), max_concurrent=max_concurrent)
    games: Counter[int] = Counter()
    open_tables: list[list[int]] = []
    # At most half the seats the bots could take: a saturated ladder leaves the
    # planner no choice (the next free seats are whoever's match just ended).
    target = max(1, bots * max_concurrent // 8)
    for _ in range(300):
        busy = Counter(b for t in open_tables for b in t)
        pool = [Candidate(b, owners[b], 1500.0, games[b], busy[b]) for b in range(bots)]
        for table in plan_tables(pool, target - len(open_tables), rng, config):
            assert len({owners[b] for b in table}) == len(table), "same-owner table"
            open_tables.append(table)
            games.update(table)
        busy = Counter(b for t in open_tables for b in t)
        assert all(n <= max_concurrent for n in busy.values()), busy
        # Some matches finish, in any order.
        open_tables = [t for t in open_tables if rng.random() < 0.5]
    # Matches last a random number of ticks (a bot in a long one waits): a few games.
    counts = [games[b] for b in range(bots)]
    mean = sum(counts) / bots
    assert max(counts) - min(counts) <= 4 + 2 * max_concurrent, (counts, mean)


@settings(max_examples=200, deadline=None)
@given(candidates, st.integers(0, 12), st.integers(0, 2**32), st.integers(1, 4), st.floats(0, 1))
def test_duplicate_sets_keep_the_limits(cands, count, seed, max_concurrent, share) -> None:
    """A duplicate set of n seats is n matches: the count and every bot's limit still hold."""
    config = PlannerConfig(max_concurrent=max_concurrent)
    planned = plan_sets(cands, count, random.Random(seed), config, duplicate_share=share)
    by_id = {c.bot_id: c for c in cands}
    assert sum(t.matches for t in planned) <= count
    busy = Counter({c.bot_id: c.active_matches for c in cands})
    for t in planned:
        assert len({by_id[b].owner_id for b in t.bots}) == len(t.bots), "same-owner table"
        for b in t.bots:
            busy[b] += t.matches
    assert all(busy[b] <= max(max_concurrent, by_id[b].active_matches) for b in busy)
    if share == 0:
        assert not any(t.duplicate for t in planned)
        assert [t.bots for t in planned] == plan_tables(cands, count, random.Random(seed), config)


def test_duplicate_share_is_about_what_is_asked() -> None:
    pool = [Candidate(b, b, 1500.0) for b in range(30)]
    config = PlannerConfig(max_concurrent=4)
    shares = {}
    for share in (0.25, 1.0):
        planned = [
            t
            for seed in range(200)
            for t in plan_sets(pool, 8, random.Random(seed), config, duplicate_share=share)
        ]
        shares[share] = sum(t.duplicate for t in planned) / len(planned)
    # Tables that no longer fit a set (one match left to make) are played once.
    assert abs(shares[0.25] - 0.25) < 0.08 and shares[1.0] > 0.8, shares
