"""The final's pure parts: brackets, groups, the bootstrap and the sign test, the
settled-or-capped stop of every format (no Django)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ladder.competitions.brackets import (
    Matchup,
    double_elimination,
    groups_snake,
    seed_positions,
    single_elimination,
)
from ladder.competitions.final import FinalConfig, Format, final_step
from ladder.competitions.settle import DealRecord, matchup_call, pair_shares, settle, sign_p_value
from ladder.tournaments.rotations import rotations


def _results(seed: int):
    """A random but fixed winner per match-up."""
    decided: dict[str, int] = {}

    def result(m: Matchup) -> int:
        if m.key not in decided:
            decided[m.key] = random.Random(f"{seed}:{m.key}").choice((m.a, m.b))
        return decided[m.key]

    return result, decided


@given(st.integers(0, 6))
def test_seed_positions_pair_best_with_worst(power) -> None:
    size = 1 << power
    slots = seed_positions(size)
    assert sorted(slots) == list(range(size))
    if size > 1:
        for i in range(0, size, 2):
            assert slots[i] + slots[i + 1] == size - 1


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 24), st.integers(0, 10**6))
def test_single_elimination_places_everyone_once(n, seed) -> None:
    result, _ = _results(seed)
    bracket = single_elimination(list(range(n)), result)
    assert not bracket.pending and bracket.placing is not None
    placed = [b for tier in bracket.placing for b in tier]
    assert sorted(placed) == list(range(n))
    matchups = [m for r in bracket.rounds for m in r]
    assert sum(m.label != "third place" for m in matchups) == n - 1
    champion = bracket.placing[0][0]
    assert all(result(m) == champion for m in matchups if champion in (m.a, m.b))
    for r in bracket.rounds:  # nobody plays twice in a round
        seen = Counter(b for m in r for b in (m.a, m.b))
        assert max(seen.values()) == 1
    if n >= 4:  # the third-place match-up is played, so places 1-4 stand alone
        assert [len(t) for t in bracket.placing[:4]] == [1, 1, 1, 1]


def test_single_elimination_gives_byes_to_the_top_seeds() -> None:
    bracket = single_elimination(list(range(5)), lambda m: m.a)
    first = {(m.a, m.b) for m in bracket.rounds[0]}
    assert first == {(3, 4)}  # seeds 0, 1, 2 wait a round
    assert bracket.placing is not None and [t[0] for t in bracket.placing[:2]] == [0, 1]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 20), st.integers(0, 10**6))
def test_double_elimination_eliminates_on_the_second_loss(n, seed) -> None:
    result, _ = _results(seed)
    bracket = double_elimination(list(range(n)), result)
    assert bracket.placing is not None and not bracket.pending
    losses: Counter[int] = Counter()
    for r in bracket.rounds:
        seen = Counter(b for m in r for b in (m.a, m.b))
        assert max(seen.values()) == 1
        for m in r:
            assert losses[m.a] < 2 and losses[m.b] < 2  # the eliminated never play again
            losses[m.b if result(m) == m.a else m.a] += 1
    champion = bracket.placing[0][0]
    assert losses[champion] <= 1
    assert all(losses[b] == 2 for b in range(n) if b != champion)
    assert sorted(b for t in bracket.placing for b in t) == list(range(n))


@given(st.lists(st.integers(), min_size=2, max_size=40, unique=True), st.integers(2, 4))
def test_snake_groups_are_level(seeds, size) -> None:
    groups = groups_snake(seeds, size)
    assert sorted(b for g in groups for b in g) == sorted(seeds)
    sizes = [len(g) for g in groups]
    assert max(sizes) - min(sizes) <= 1 and max(sizes) <= size
    assert len(groups) == -(-len(seeds) // size)


def test_sign_test_and_matchup_call() -> None:
    assert sign_p_value(5, 0) == pytest.approx(1 / 32)
    assert sign_p_value(0, 0) == 1.0
    won = {(1, 2): 1.0, (2, 1): 0.0}
    split = {(1, 2): 0.5, (2, 1): 0.5}
    call = matchup_call(1, 2, [won] * 4, confidence=0.95, min_deals=2, max_deals=16)
    assert not call.decided  # 4 straight: p = 1/16 > 0.05
    call = matchup_call(1, 2, [won] * 5, confidence=0.95, min_deals=2, max_deals=16)
    assert call.decided and call.leader == 1 and not call.coin_toss
    call = matchup_call(1, 2, [split] * 16, confidence=0.95, min_deals=2, max_deals=16)
    assert call.decided and call.coin_toss and call.leader == 1  # the better seed on a tie


@settings(max_examples=25, deadline=None)
@given(st.lists(st.lists(st.integers(1, 4), min_size=3, max_size=3), min_size=3, max_size=3))
def test_pair_shares_are_complementary(rotation_ranks) -> None:
    shares = pair_shares((7, 8, 9), rotation_ranks)
    for (a, b), s in shares.items():
        assert 0 <= s <= 1 and s + shares[(b, a)] == pytest.approx(1)


def test_settle_orders_and_is_sure_of_a_clear_gap() -> None:
    records = [DealRecord("t", (1, 2), {(1, 2): 1.0, (2, 1): 0.0}) for _ in range(8)]
    s = settle(records, [2, 1], confidence=0.95, resamples=200, rng=random.Random(0))
    assert s.order == [1, 2] and s.above[0] == 1.0
    assert s.interval[1] == (1, 1)
    even = [DealRecord("t", (1, 2), {(1, 2): x, (2, 1): 1 - x}) for x in (1.0, 0.0) * 4]
    s = settle(even, [1, 2], confidence=0.95, resamples=200, rng=random.Random(0))
    assert 0.3 < s.above[0] < 0.7 and s.interval[1] == (1, 2)


def _play(config: FinalConfig, strength: dict[int, float], seed: int = 0, steps: int = 400):
    """Drive a final with simulated deals: every rotation ranks the bots by strength plus
    noise; returns the finished step and the number of steps."""
    rng = random.Random(seed)
    seeds = sorted(strength)
    rng.shuffle(seeds)
    records: list[DealRecord] = []
    for n in range(steps):
        step = final_step(config, seeds, records)
        if step.result is not None:
            return step, n
        assert step.play, "a step that neither plays nor finishes would stall"
        for request in step.play:
            assert request.deals >= 1
            for _ in range(request.deals):
                ranks = []
                for _rot in rotations(request.table):
                    perf = {b: strength[b] + rng.gauss(0, 1) for b in request.table}
                    order = sorted(request.table, key=lambda b: -perf[b])
                    ranks.append([order.index(b) + 1 for b in request.table])
                records.append(
                    DealRecord(request.key, request.table, pair_shares(request.table, ranks))
                )
    raise AssertionError("the final never finished")


FORMATS = [
    FinalConfig(format=Format.ROUND_ROBIN, resamples=100, top=3, max_games=600),
    FinalConfig(format=Format.ROUND_ROBIN, seats=3, resamples=100, top=3, max_games=600),
    FinalConfig(format=Format.SWISS, resamples=60, top=3, max_games=600),
    FinalConfig(format=Format.SINGLE_ELIMINATION, resamples=60),
    FinalConfig(format=Format.DOUBLE_ELIMINATION, resamples=60),
    FinalConfig(format=Format.GROUPS, seats=3, advance=1, resamples=100, top=3),
    FinalConfig(format=Format.MULTI_STAGE, first=Format.SWISS, finalists=3, resamples=60),
]


@pytest.mark.parametrize("config", FORMATS, ids=lambda c: f"{c.format}-{c.seats}")
def test_clear_strengths_settle_the_top_before_the_cap(config) -> None:
    strength = {b: 3.0 * b for b in range(1, 7)}  # far apart: every rotation agrees
    step, _ = _play(config, strength)
    result = step.result
    assert result is not None
    order = [p.bot for p in result.places]
    assert sorted(order) == sorted(strength)
    assert order[0] == 6
    assert result.settled_places >= 1 and not result.capped
    if config.format in (Format.ROUND_ROBIN, Format.SWISS, Format.MULTI_STAGE):
        # (a knockout or a group round may meet the second-best early and drop it)
        assert order[:3] == [6, 5, 4]
        assert not result.coin_tosses[:1] or result.coin_tosses[0][0] not in (6, 5)


@pytest.mark.parametrize(
    "config",
    [
        FinalConfig(format=Format.ROUND_ROBIN, resamples=100, top=4, max_games=120),
        FinalConfig(format=Format.SINGLE_ELIMINATION, matchup_max_deals=6),
        FinalConfig(
            format=Format.GROUPS,
            seats=3,
            advance=1,
            group_max_deals=5,
            top=3,
            max_games=200,
            resamples=100,
        ),
    ],
    ids=lambda c: str(c.format),
)
def test_equal_bots_stop_at_the_cap_and_say_coin_toss(config) -> None:
    step, _ = _play(config, {b: 0.0 for b in range(1, 7)}, seed=3)
    result = step.result
    assert result is not None
    assert result.coin_tosses, "equal bots cannot be settled"
    if config.format == Format.ROUND_ROBIN:
        assert result.games <= config.max_games and result.capped
    else:
        assert any(t for t in result.coin_tosses)


def test_a_step_is_reproducible() -> None:
    config = FinalConfig(format=Format.ROUND_ROBIN, resamples=50, top=2, max_games=200)
    a, _ = _play(config, {b: b * 0.5 for b in range(1, 5)}, seed=9)
    b, _ = _play(config, {b: b * 0.5 for b in range(1, 5)}, seed=9)
    assert a.result == b.result


def test_config_refuses_what_cannot_be_played() -> None:
    with pytest.raises(ValueError, match="2 seats"):
        FinalConfig(format=Format.SINGLE_ELIMINATION, seats=3).check(8)
    with pytest.raises(ValueError, match="3 or 4"):
        FinalConfig(format=Format.GROUPS, seats=2).check(8)
    with pytest.raises(ValueError, match="advance"):
        FinalConfig(format=Format.GROUPS, seats=3, advance=3).check(8)
    with pytest.raises(ValueError, match="finalists"):
        FinalConfig(format=Format.MULTI_STAGE, finalists=9).check(8)
