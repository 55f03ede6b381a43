"""The rating systems' scale and calibration, as pure functions (no database).

Every system reports ratings on the Elo scale (start 1500; 400 points is 10 : 1 in
a two-seat game), one provisional rule holds for all of them, and the default
system's prior and dynamics let a bot of fixed strength leave provisional within
30 games of 2-4 seats (docs/ratings.md; ``bench/ratings_bench.py`` measures it on
real games, this checks it on games drawn from the model itself).
"""

from __future__ import annotations

import math
import random

import pytest

from ladder.common import elo
from ladder.ratings import systems
from ladder.ratings.systems import OPENSKILL_X60, OpenSkillSystem, Skill

SETTLED = 1e-6  # a sigma small enough to leave the model's spread to beta alone


@pytest.mark.parametrize("key", ["plackett-luce", "bradley-terry", "elo"])
def test_a_400_point_gap_is_ten_to_one_between_two_settled_bots(key: str) -> None:
    system = systems.system_get(key)
    assert system.initial().mu == 1500
    strong, weak = Skill(1900.0, SETTLED, 50), Skill(1500.0, SETTLED, 50)
    assert system.pair_probability(strong, weak) == pytest.approx(10 / 11, abs=1e-6)
    assert system.first_probabilities([strong, weak])[0] == pytest.approx(10 / 11, abs=1e-6)


def test_one_provisional_rule_keeps_elos_first_nine_games() -> None:
    """Elo's sigma is its standard error after the games; with the default threshold the
    games decide, exactly as before: provisional for the first 9 games."""
    flags = [
        elo.provisional(
            elo.sigma_after(g), g, provisional_above=elo.DEFAULT_PROVISIONAL_SIGMA, min_games=10
        )
        for g in range(40)
    ]
    assert flags == [g < 10 for g in range(40)]
    # A Weng-Lin sigma above the threshold keeps a rating provisional whatever its games.
    assert elo.provisional(13501, 500, provisional_above=13500, min_games=10)


def play(system: systems.RatingSystem, games_each: int, seed: int) -> dict[int, list[Skill]]:
    """Twelve players 100 points apart (1000..2100), tables of 2-4 drawn at random, each
    table's order drawn from the Plackett-Luce model on the Elo scale (strength
    10 ** (rating / 400)): every player's rating after each of its games."""
    rng = random.Random(seed)
    true = {p: 1000.0 + 100.0 * p for p in range(12)}
    now = {p: system.initial() for p in true}
    trail: dict[int, list[Skill]] = {p: [] for p in true}
    while min(len(t) for t in trail.values()) < games_each:
        seats = rng.sample(sorted(true), rng.choice((2, 3, 4)))
        left, order = list(seats), []
        while left:
            weights = [10 ** (true[p] / 400) for p in left]
            pick = rng.choices(left, weights)[0]
            order.append(pick)
            left.remove(pick)
        ranks = [order.index(p) + 1 for p in seats]
        for p, after in zip(seats, system.update([now[p] for p in seats], ranks), strict=True):
            now[p] = after
            trail[p].append(after)
    return trail


def provisional(s: Skill) -> bool:
    return elo.provisional(
        round(s.sigma * elo.SCALE),
        s.games,
        provisional_above=elo.DEFAULT_PROVISIONAL_SIGMA,
        min_games=systems.PROVISIONAL_GAMES,
    )


def test_the_default_system_settles_within_30_games_on_the_elo_scale() -> None:
    trail = play(systems.system_get("plackett-luce"), games_each=60, seed=4)
    assert not any(provisional(t[29]) for t in trail.values())
    # On the Elo scale: the ratings follow the true strengths point for point (the slope of
    # rating on strength near 1), closely (correlation), whatever the table sizes.
    true = [1000.0 + 100.0 * p for p in sorted(trail)]
    final = [trail[p][-1].mu for p in sorted(trail)]
    mt, mf = sum(true) / len(true), sum(final) / len(final)
    cov = sum((x - mt) * (y - mf) for x, y in zip(true, final, strict=True))
    slope = cov / sum((x - mt) ** 2 for x in true)
    corr = cov / math.sqrt(sum((x - mt) ** 2 for x in true) * sum((y - mf) ** 2 for y in final))
    assert 0.8 < slope < 1.4 and corr > 0.97, (slope, corr)
    moves = [abs(t[g].mu - t[g - 1].mu) for t in trail.values() for g in range(30, len(t))]
    assert sorted(moves)[len(moves) // 2] < 15  # Elo K 32 moves 16 in an even 2-seat game


def test_the_earlier_default_kept_every_bot_provisional() -> None:
    """What was found: openskill's defaults x 60 (sigma/c damping) left every bot's
    sigma wide after 30 games and spread the ratings about twice as wide as Elo's."""
    earlier = OpenSkillSystem("plackett-luce-x60", "earlier", "PlackettLuce", OPENSKILL_X60)
    trail = play(earlier, games_each=60, seed=4)
    assert all(provisional(t[29]) for t in trail.values())
    spread = max(t[-1].mu for t in trail.values()) - min(t[-1].mu for t in trail.values())
    assert spread > 2 * 1100  # the true strengths span 1,100 Elo points
