"""How sure an order is: a bootstrap over duplicate deals, and a sign test for a match-up.

Pure (no Django, no clock, no global RNG): the final's formats
(``ladder.competitions.final``) call these to decide whether to play more deals.

A deal's record holds, for every ordered pair of bots at its table, the share of
its seat rotations in which the first finished ahead of the second (½ for a
tie): 1.0 means "ahead in every rotation of the same cave". A bot's score at a
table is its mean share against the others there over the table's deals, and its
score overall the mean over its tables, so a table that was given extra deals
(to separate two close bots) does not weigh more than the others.

The order's confidence is a bootstrap over deals, resampled within each table
(the deals of one table are exchangeable, the tables are not). Each table's
sample gets one drawn deal (every share ½) as a prior, so two lucky deals do not
"settle" anything: with few deals the bootstrap alone is overconfident.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Pair = tuple[int, int]
# One deal's share around its table's mean: the pooled variance never goes below
# VARIANCE_FLOOR (a few alike deals are not certainty), and is PRIOR_VARIANCE when no
# table has two deals yet (a share of 0, ½ or 1 at even odds has variance 0.125).
VARIANCE_FLOOR = 0.02
PRIOR_VARIANCE = 0.125


@dataclass(frozen=True)
class DealRecord:
    """One complete duplicate deal of the final: which table (``key``) and the pair shares.

    ``pairs`` maps (a, b) to a's share over b in [0, 1], for every ordered pair
    of the table (so ``pairs[(b, a)] == 1 - pairs[(a, b)]``); None for a deal
    with an errored match (it counts toward the cap, not the statistics).
    """

    key: str
    table: tuple[int, ...]
    pairs: Mapping[Pair, float] | None


def pair_shares(table: Sequence[int], rotations: Sequence[Sequence[int]]) -> dict[Pair, float]:
    """The pair shares of one deal from the ranks of its rotations.

    ``rotations`` holds, for each rotation, the rank of every bot of ``table`` in
    table order (not seat order): smaller is better, equal is a tie.
    """
    out: dict[Pair, float] = {}
    for i, a in enumerate(table):
        for j, b in enumerate(table):
            if i == j:
                continue
            won = sum(1.0 if r[i] < r[j] else 0.5 if r[i] == r[j] else 0.0 for r in rotations)
            out[(a, b)] = won / len(rotations)
    return out


def _table_scores(deals: Sequence[Mapping[Pair, float]], table: Sequence[int]) -> dict[int, float]:
    """Each bot's mean share against the rest of ``table`` over ``deals`` plus one drawn deal."""
    n = len(deals) + 1
    out = {}
    for a in table:
        others = [b for b in table if b != a]
        total = 0.5 * len(others) + sum(d[(a, b)] for d in deals for b in others)
        out[a] = total / (n * len(others))
    return out


def scores(records: Sequence[DealRecord], bots: Sequence[int]) -> dict[int, float]:
    """Each bot's score: the mean over its tables of its table score (0.5 with no deal)."""
    by_table = _by_table(records)
    per_bot: defaultdict[int, list[float]] = defaultdict(list)
    for table, deals in by_table.values():
        for bot, score in _table_scores(deals, table).items():
            per_bot[bot].append(score)
    return {b: (sum(per_bot[b]) / len(per_bot[b]) if per_bot[b] else 0.5) for b in bots}


def _by_table(records: Sequence[DealRecord]) -> dict[str, tuple[tuple[int, ...], list]]:
    by_table: dict[str, tuple[tuple[int, ...], list]] = {}
    for record in records:
        entry = by_table.setdefault(record.key, (record.table, []))
        if record.pairs is not None:
            entry[1].append(record.pairs)
    return by_table


@dataclass(frozen=True)
class Settlement:
    """An order and how sure it is.

    ``order``: best first (score, then the given ``bots`` order); ``scores``;
    ``above[i]``: the bootstrap probability that ``order[i]`` scores above
    ``order[i + 1]``; ``interval[bot]``: the (low, high) place of the bot over
    the middle ``confidence`` of the resamples (places from 1).
    """

    order: list[int]
    scores: dict[int, float]
    above: list[float]
    interval: dict[int, tuple[int, int]]

    def settled(self, top: int, confidence: float) -> list[bool]:
        """For each line between adjacent places down to the one below place ``top``
        (so who holds the first ``top`` places, and in which order): settled?"""
        return [p >= confidence for p in self.above[: max(0, top)]]


def settle(
    records: Sequence[DealRecord],
    bots: Sequence[int],
    *,
    confidence: float,
    resamples: int,
    rng: random.Random,
    fit: bool = False,
) -> Settlement:
    """The order of ``bots`` by score and its bootstrap confidence (see the module).

    With ``fit`` the score is a Bradley-Terry strength fitted to the pair shares
    (``bradley_terry``) instead of the mean share: for formats where bots meet
    different opponents (Swiss), so a strong schedule is not read as weakness.
    """
    seed_order = {b: i for i, b in enumerate(bots)}
    tables = list(_by_table(records).values())
    # Per table, per deal, each bot's mean share against the rest of the table: a
    # resample then only sums picked rows.
    rows = [
        (
            table,
            [
                [sum(d[(a, b)] for b in table if b != a) / (len(table) - 1) for a in table]
                for d in deals
            ],
            deals,
        )
        for table, deals in tables
    ]

    def widen(k: int) -> float:
        """How much a resample's deviation is widened for a table of ``k`` deals: the
        bootstrap's variance is (k - 1) / k of the sample's, which at 2-3 deals a table
        makes it claim a settled order far too soon (the bench showed it)."""
        return 1.0 if k == 0 else 2.0 if k == 1 else math.sqrt(k / (k - 1))

    def raw_scores(picks: list[list[int]]) -> dict[int, float]:
        if fit:
            return bradley_terry(
                [[deals[i] for i in pick] for (_, _, deals), pick in zip(rows, picks, strict=True)],
                [t for t, _, _ in rows],
                bots,
            )
        per_bot: defaultdict[int, list[float]] = defaultdict(list)
        for (table, per_deal, _), pick in zip(rows, picks, strict=True):
            n = len(pick) + 1
            for j, a in enumerate(table):
                per_bot[a].append((0.5 + sum(per_deal[i][j] for i in pick)) / n)
        return {b: (sum(per_bot[b]) / len(per_bot[b]) if per_bot[b] else 0.5) for b in bots}

    # Tables' means and the pooled variance of one deal's share around its table's mean.
    centres = [
        [(0.5 + sum(row[j] for row in per_deal)) / (len(per_deal) + 1) for j in range(len(table))]
        for table, per_deal, _ in rows
    ]
    squares = dof = 0.0
    for table, per_deal, _ in rows:
        if len(per_deal) >= 2:
            for j in range(len(table)):
                mean = sum(row[j] for row in per_deal) / len(per_deal)
                squares += sum((row[j] - mean) ** 2 for row in per_deal)
                dof += len(per_deal) - 1
    pooled = max(squares / dof, VARIANCE_FLOOR) if dof else PRIOR_VARIANCE

    def parametric() -> dict[int, float]:
        """One parametric resample of the mean scores: each table's means moved by noise of
        the pooled variance over its deals (antisymmetric: a table's shares sum to a
        constant). Resampling within a table of 2-3 deals, often alike, would claim an
        order settled far too soon (the bench showed it with the bootstrap alone)."""
        per_bot: defaultdict[int, list[float]] = defaultdict(list)
        for (table, per_deal, _), centre in zip(rows, centres, strict=True):
            m = len(table)
            sd = math.sqrt(pooled / (len(per_deal) + 1) * m / (m - 1))
            noise = [rng.gauss(0.0, sd) for _ in table]
            shift = sum(noise) / m
            for j, a in enumerate(table):
                per_bot[a].append(centre[j] + noise[j] - shift)
        return {b: (sum(per_bot[b]) / len(per_bot[b]) if per_bot[b] else 0.5) for b in bots}

    point = raw_scores([list(range(len(per_deal))) for _, per_deal, _ in rows])
    counts = sorted(len(per_deal) for _, per_deal, _ in rows) or [0]
    overall = widen(counts[len(counts) // 2]) if fit else 1.0

    def score_of(picks: list[list[int]]) -> dict[int, float]:
        if not fit:
            return parametric()
        s = raw_scores(picks)
        return {b: point[b] + overall * (s[b] - point[b]) for b in bots}

    order = sorted(bots, key=lambda b: (-point[b], seed_order[b]))
    wins = [0.0] * max(0, len(order) - 1)
    places: dict[int, list[int]] = {b: [] for b in bots}
    for _ in range(resamples):
        picks = [[rng.randrange(len(pd)) for _ in pd] for _, pd, _ in rows]
        s = score_of(picks)
        for i in range(len(order) - 1):
            a, b = s[order[i]], s[order[i + 1]]
            wins[i] += 1.0 if a > b else 0.5 if a == b else 0.0
        ranked = sorted(bots, key=lambda b: (-s[b], seed_order[b]))
        for place, bot in enumerate(ranked, start=1):
            places[bot].append(place)
    tail = (1 - confidence) / 2
    interval = {}
    for bot, seen in places.items():
        seen.sort()
        if not seen:
            interval[bot] = (order.index(bot) + 1, order.index(bot) + 1)
            continue
        low = seen[min(len(seen) - 1, math.floor(tail * len(seen)))]
        high = seen[min(len(seen) - 1, math.ceil((1 - tail) * len(seen)) - 1)]
        interval[bot] = (low, high)
    return Settlement(
        order=order,
        scores=point,
        above=[w / resamples if resamples else 0.5 for w in wins],
        interval=interval,
    )


def bradley_terry(
    deals_by_table: Sequence[Sequence[Mapping[Pair, float]]],
    tables: Sequence[Sequence[int]],
    bots: Sequence[int],
    *,
    iterations: int = 30,
) -> dict[int, float]:
    """Bradley-Terry strengths (log scale) from pair shares, by the MM algorithm.

    Each table contributes its pairs' share totals, plus one drawn meeting per pair
    (the same prior as the mean scores), which also keeps every strength finite.
    """
    won: defaultdict[int, float] = defaultdict(float)
    meetings: defaultdict[Pair, float] = defaultdict(float)
    for table, deals in zip(tables, deals_by_table, strict=True):
        for a in table:
            for b in table:
                if a < b:
                    n = len(deals) + 1
                    share = 0.5 + sum(d[(a, b)] for d in deals)
                    won[a] += share
                    won[b] += n - share
                    meetings[(a, b)] += n
    strength = {b: 1.0 for b in bots}
    for _ in range(iterations):
        denominator: defaultdict[int, float] = defaultdict(float)
        for (a, b), count in meetings.items():
            d = count / (strength[a] + strength[b])
            denominator[a] += d
            denominator[b] += d
        strength = {b: (won[b] / denominator[b] if denominator[b] else strength[b]) for b in bots}
        total = sum(strength.values()) / len(strength)
        strength = {b: v / total for b, v in strength.items()}
    return {b: math.log(v) for b, v in strength.items()}


@dataclass(frozen=True)
class MatchupCall:
    """A 2-bot match-up's state: the leader, how sure (one-sided p), decided or not."""

    leader: int
    share: float  # the leader's mean share over the deals played
    decisive_for: int  # deals the leader won outright (ahead in every rotation)
    decisive_against: int
    p_value: float  # one-sided sign test: P(at least this many | no difference)
    decided: bool
    coin_toss: bool  # decided by the cap, not by the evidence


def sign_p_value(wins: int, losses: int) -> float:
    """One-sided exact sign test: P(X >= wins) for X ~ Binomial(wins + losses, ½)."""
    n = wins + losses
    if n == 0:
        return 1.0
    return sum(math.comb(n, k) for k in range(wins, n + 1)) / 2**n


def matchup_call(
    a: int,
    b: int,
    deals: Sequence[Mapping[Pair, float]],
    *,
    confidence: float,
    min_deals: int,
    max_deals: int,
) -> MatchupCall:
    """Is the match-up of seeds ``a`` (the better seed) and ``b`` decided?

    The evidence is the deals one bot won outright (ahead of the other in every
    rotation of the same cave); split deals say nothing about who is better. The
    match-up is decided once the sign test over the outright deals rejects "no
    difference" at ``1 - confidence`` (after ``min_deals``), or at ``max_deals``
    (then the leader by mean share, the better seed on a tie, and it is a coin
    toss unless the test has rejected).
    """
    share_a = sum(d[(a, b)] for d in deals) / len(deals) if deals else 0.5
    wins_a = sum(1 for d in deals if d[(a, b)] == 1.0)
    wins_b = sum(1 for d in deals if d[(a, b)] == 0.0)
    leader = a if (share_a > 0.5 or (share_a == 0.5 and wins_a >= wins_b)) else b
    lead_w, lead_l = (wins_a, wins_b) if leader == a else (wins_b, wins_a)
    p = sign_p_value(lead_w, lead_l)
    sure = len(deals) >= min_deals and p <= 1 - confidence
    capped = len(deals) >= max_deals
    return MatchupCall(
        leader=leader,
        share=share_a if leader == a else 1 - share_a,
        decisive_for=lead_w,
        decisive_against=lead_l,
        p_value=p,
        decided=sure or capped,
        coin_toss=capped and not sure,
    )
