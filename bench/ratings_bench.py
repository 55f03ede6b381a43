"""Which rating system ranks this game's bots best? Replay matches in order and score each.

    .venv/bin/python bench/ratings_bench.py [--matches 6000] [--seed 0] [--workers 2] \
        [--ladder KEY] [--out docs/ratings.md] [--json var/ratings_bench.json] [--sweep]

Two histories are replayed, in recording order:

- **synthetic**: a population of the engine's own players whose strength is
  known by construction — the heuristic mixed with the random player
  (``mix-P`` plays the heuristic's move with probability P, a random legal move
  otherwise: strength grows with P) — plus the exploit players of
  ``engine/players`` and their 50 % mixtures; three players of each mix
  strength (equals the table should not split). Matches of 2, 3 and 4 seats
  (equally often) seat players drawn at random from those who have joined; a
  third of the population joins only half-way (late joiners). The games are
  played by the real engine on dd-2 normal and cached under
  ``var/ratings_bench/`` (a rerun with the same arguments replays the cache).
  The first quarter of the history is scored on its own too: a young ladder,
  where a new bot's first games matter most.
- **ladder** (``--ladder KEY``, with ``DATABASE_URL`` / the Django settings of the
  ladder): that ladder's recorded, rated results in recording order.

Each system rates the history online, and *before* each match is seen it
predicts it; the scores:

- **rank-1 log-loss / accuracy**: the predicted chance of the seat(s) that
  ranked first, and whether the most likely seat did;
- **pairwise log-loss / accuracy**: for every pair of seats with different
  ranks, the predicted chance that the better one ranks above;
- **games to settle**: per bot, the games after which its rating stays within
  its final 95 % interval (mu ± 1.96 sigma) for good (median over bots; late
  joiners included);
- **rank correlation** (Spearman) of the final table (by mu - 3 sigma, what the
  leaderboard ranks by) with the known strength order of the ``mix-P`` family,
  and with the batch maximum-likelihood fit over every bot;
- **top-10 stability**: over the last 20 % of matches, how often the top 10 (by
  mu - 3 sigma) changes membership, per 100 matches.

And what a visitor reads of each bot's rating (the second table of each section):

- **games to settle**: the games after which the bot is never provisional again
  (the ladder's rule: ``elo.provisional``) and its rating stays inside its final
  95 % interval (median and 90th percentile; "never" for a bot provisional at the end);
- the share of bots **provisional after 30 and after 100 games**;
- the **move per match once settled** (median and 95th percentile of |delta mu|);
- the **lowest rating** and the lowest mu - 3 sigma of the final table.

``--sweep`` prints only that table for Plackett-Luce on the Elo scale over a grid
of its prior and dynamics (sigma0, tau, gamma), beside Elo and the earlier
default: how the default's parameters were chosen (docs/ratings.md).

The reference ``ml-refit`` is a batch maximum-likelihood Plackett-Luce fit of
all the matches before, refitted every ``--refit`` matches: what an online
system could at best know. Figures are of one run on this machine; the
markdown table goes to ``--out``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tqdm import tqdm  # noqa: E402

from engine.players import EXPLOITS, HeuristicPlayer, RandomPlayer  # noqa: E402
from engine.rules import ENGINE_VERSION, Action, GameConfig, new_game  # noqa: E402
from engine.simulate import play_out  # noqa: E402
from ladder.ratings.systems import (  # noqa: E402
    BENCH_SYSTEMS,
    BETA_ELO,
    ELO_POINTS_PER_NAT,
    OpenSkillSystem,
    RatingSystem,
    Skill,
    WengLinParams,
    ml_plackett_luce,
)

K_SIGMA = 3.0
"""The leaderboard's conservative rating is mu - K_SIGMA * sigma."""
Z95 = 1.959964
CACHE = ROOT / "var" / "ratings_bench"
MIX_LEVELS = (1.0, 0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0)


# --- the synthetic population ---------------------------------------------------------


class MixPlayer:
    """Plays ``base``'s move with probability ``p``, a uniformly random legal move otherwise."""

    def __init__(self, rng: random.Random, base: Any, p: float) -> None:
        self.rng, self.base, self.p = rng, base, p
        self.other = RandomPlayer(random.Random(rng.random()))

    def act(self, observation: Any, legal: list[Action]) -> Action:
        if self.rng.random() < self.p:
            return self.base.act(observation, legal)
        return self.other.act(observation, legal)


def population() -> dict[str, tuple[Callable[[random.Random], Any], float | None]]:
    """Player name -> (factory, known strength or None). Known: the mix-P family, by P."""
    out: dict[str, tuple[Callable[[random.Random], Any], float | None]] = {}
    for p in MIX_LEVELS:
        for copy in "abc":  # three players of each strength: equals the table must not split
            out[f"mix-{round(p * 100):03d}{copy}"] = (
                lambda rng, p=p: MixPlayer(rng, HeuristicPlayer(random.Random(rng.random())), p),
                p,
            )
    for name, factory in EXPLOITS.items():
        out[name] = (factory, None)
        out[f"{name}-50"] = (
            lambda rng, f=factory: MixPlayer(rng, f(random.Random(rng.random())), 0.5),
            None,
        )
    return out


@dataclass(frozen=True)
class Game:
    """One recorded match: the bots by seat and their ranks (1 = best)."""

    bots: tuple[str, ...]
    ranks: tuple[int, ...]


def schedule(matches: int, seed: int) -> list[tuple[int, tuple[str, ...]]]:
    """(seed, line-up) of every match: 2-4 seats, drawn among the bots who have joined."""
    rng = random.Random(seed)
    names = sorted(population())
    late = set(names[1::3])  # every third bot, across strengths, joins half-way
    out = []
    for i in range(matches):
        present = [n for n in names if n not in late or i >= matches // 2]
        seats = rng.choice((2, 3, 4))
        out.append((rng.randrange(2**62), tuple(rng.sample(present, seats))))
    return out


def play(job: tuple[int, tuple[str, ...]]) -> Game:
    """Play one match with the real engine (dd-2, normal)."""
    game_seed, lineup = job
    pop = population()
    state = new_game(GameConfig(seed=game_seed, num_seats=len(lineup), ruleset="dd-2"))
    bots = [pop[name][0](random.Random(game_seed * 8 + s)) for s, name in enumerate(lineup)]
    play_out(state, lambda seat, obs, legal: bots[seat].act(obs, legal))
    assert state.result is not None
    return Game(lineup, tuple(state.result["ranks"]))


def synthetic(matches: int, seed: int, workers: int) -> list[Game]:
    """The synthetic history, from the cache when it holds it."""
    key = hashlib.sha256(f"{ENGINE_VERSION}:{matches}:{seed}:v2".encode()).hexdigest()[:16]
    path = CACHE / f"synthetic-{key}.jsonl"
    if path.exists():
        return [Game(tuple(r["bots"]), tuple(r["ranks"])) for r in map(json.loads, path.open())]
    jobs = schedule(matches, seed)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        games = list(
            tqdm(pool.map(play, jobs, chunksize=50), total=len(jobs), desc="playing", unit="game")
        )
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as fh:
        for g in games:
            fh.write(json.dumps({"bots": g.bots, "ranks": g.ranks}) + "\n")
    tmp.replace(path)
    return games


def ladder_history(key: str) -> list[Game]:
    """A ladder's rated results in recording order (Django settings from the environment)."""
    import itertools

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")
    import django

    django.setup()
    from ladder.matches.models import MatchSeat

    rows = (
        MatchSeat.objects.filter(match__ladder=key, result__isnull=False, result__elo_k__gt=0)
        .order_by("result_id", "seat")
        .values_list("result_id", "bot_id", "rank")
        .iterator(chunk_size=5000)
    )
    return [
        Game(tuple(str(r[1]) for r in seats), tuple(r[2] or 0 for r in seats))
        for _, group in itertools.groupby(rows, key=lambda r: r[0])
        if len(seats := list(group)) >= 2
    ]


# --- scoring --------------------------------------------------------------------------


class MlRefit(RatingSystem):
    """The reference: a batch ML Plackett-Luce fit of the past, refitted every ``every`` games."""

    key = "ml-refit"
    label = "batch ML Plackett-Luce, refitted (reference)"

    def __init__(self, every: int) -> None:
        self.every = every
        self.past: list[Game] = []
        self.fit: dict[str, tuple[float, float]] = {}

    def initial(self) -> Skill:
        return Skill(1500.0, 500.0)

    def skill(self, bot: str, games: int) -> Skill:
        mu, sigma = self.fit.get(bot, (1500.0, 500.0))
        return Skill(mu, sigma, games)

    def observe(self, game: Game) -> None:
        self.past.append(game)
        if len(self.past) % self.every == 0:
            fitted = ml_plackett_luce(
                ((g.bots, g.ranks) for g in self.past),
                start={b: mu for b, (mu, _) in self.fit.items()},
            )
            self.fit = {b: (fitted.mu[b], fitted.sigma[b]) for b in fitted.mu}

    def pair_probability(self, a: Skill, b: Skill) -> float:
        return 1.0 / (1.0 + math.exp((b.mu - a.mu) / ELO_POINTS_PER_NAT))

    def first_probabilities(self, skills: Sequence[Skill]) -> list[float]:
        top = max(s.mu for s in skills)
        w = [math.exp((s.mu - top) / ELO_POINTS_PER_NAT) for s in skills]
        return [x / sum(w) for x in w]


@dataclass
class Score:
    system: str
    label: str
    rank1_loss: list[float] = field(default_factory=list)
    rank1_hit: list[float] = field(default_factory=list)
    pair_loss: list[float] = field(default_factory=list)
    pair_hit: list[float] = field(default_factory=list)
    settle: list[int] = field(default_factory=list)
    spearman_known: float | None = None
    spearman_ml: float | None = None
    top10_changes_per_100: float = 0.0
    seconds: float = 0.0
    calibrated: bool = False
    settled_after: list[float] = field(default_factory=list)
    provisional_30: list[float] = field(default_factory=list)
    provisional_100: list[float] = field(default_factory=list)
    settled_moves: list[float] = field(default_factory=list)
    lowest_rating: float | None = None
    lowest_score: float | None = None

    def row(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "label": self.label,
            "rank1_logloss": statistics.fmean(self.rank1_loss),
            "rank1_accuracy": statistics.fmean(self.rank1_hit),
            "pair_logloss": statistics.fmean(self.pair_loss),
            "pair_accuracy": statistics.fmean(self.pair_hit),
            "games_to_settle_median": statistics.median(self.settle) if self.settle else None,
            "spearman_known": self.spearman_known,
            "spearman_ml": self.spearman_ml,
            "top10_changes_per_100": self.top10_changes_per_100,
            "seconds": self.seconds,
            **(self.calibration() if self.calibrated else {}),
        }

    def calibration(self) -> dict[str, Any]:
        """The figures of a rating a visitor reads: when it settles, how it moves then."""
        settled = sorted(self.settled_after)
        moves = sorted(self.settled_moves)
        return {
            "games_to_settle_full_median": _quantile(settled, 0.5),
            "games_to_settle_full_p90": _quantile(settled, 0.9),
            "settled_by_30": _share(x <= 30 for x in settled),
            "provisional_after_30": _share(self.provisional_30),
            "provisional_after_100": _share(self.provisional_100),
            "settled_move_median": _quantile(moves, 0.5),
            "settled_move_p95": _quantile(moves, 0.95),
            "lowest_rating": self.lowest_rating,
            "lowest_score": self.lowest_score,
        }


def _quantile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile of sorted ``values`` (nearest rank); None when empty; inf stays inf."""
    if not values:
        return None
    return values[min(len(values) - 1, max(0, math.ceil(q * len(values)) - 1))]


def _share(flags: Any) -> float | None:
    flags = [float(f) for f in flags]
    return statistics.fmean(flags) if flags else None


def _clip(p: float) -> float:
    return min(max(p, 1e-9), 1.0 - 1e-9)


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation (average ranks for ties)."""

    def ranks(v: Sequence[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        out = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2
            i = j + 1
        return out

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    num = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    den = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return num / den if den else 0.0


def top10(skills: dict[str, Skill]) -> frozenset[str]:
    board = sorted(skills, key=lambda b: (-(skills[b].mu - K_SIGMA * skills[b].sigma), b))
    return frozenset(board[:10])


def replay(
    system: RatingSystem, games: Sequence[Game], known: dict[str, float], ml: dict[str, float]
) -> Score:
    """Rate ``games`` in order with ``system``, predicting each before it is seen."""
    score = Score(system.key, system.label)
    started = time.perf_counter()
    skills: dict[str, Skill] = {}
    trail: dict[str, list[float]] = {}
    sigmas: dict[str, list[float]] = {}
    refit = system if isinstance(system, MlRefit) else None
    tail_from = int(len(games) * 0.8)
    last_top: frozenset[str] | None = None
    changes = 0
    for n, game in enumerate(games):
        if refit is not None:
            now = [refit.skill(b, skills.get(b, Skill(0, 0)).games) for b in game.bots]
        else:
            now = [skills.get(b) or system.initial() for b in game.bots]
        first = system.first_probabilities(now)
        best = min(game.ranks)
        score.rank1_loss.append(
            -math.log(_clip(sum(p for p, r in zip(first, game.ranks, strict=True) if r == best)))
        )
        guess = max(range(len(first)), key=lambda s: (first[s], -s))
        score.rank1_hit.append(1.0 if game.ranks[guess] == best else 0.0)
        for i in range(len(now)):
            for j in range(len(now)):
                if game.ranks[i] < game.ranks[j]:
                    p = system.pair_probability(now[i], now[j])
                    score.pair_loss.append(-math.log(_clip(p)))
                    score.pair_hit.append(1.0 if p > 0.5 else 0.5 if p == 0.5 else 0.0)
        if refit is not None:
            refit.observe(game)
            for b in game.bots:
                old = skills.get(b, Skill(0, 0))
                skills[b] = refit.skill(b, old.games + 1)
            after = [skills[b] for b in game.bots]
        else:
            after = system.update(now, list(game.ranks))
            for b, s in zip(game.bots, after, strict=True):
                skills[b] = s
        for b, s in zip(game.bots, after, strict=True):
            trail.setdefault(b, []).append(s.mu)
            sigmas.setdefault(b, []).append(s.sigma)
        if n >= tail_from:
            top = top10(skills)
            if last_top is not None and top != last_top:
                changes += 1
            last_top = top
    score.seconds = time.perf_counter() - started
    tail = max(len(games) - tail_from - 1, 1)
    score.top10_changes_per_100 = 100.0 * changes / tail
    for b, mus in trail.items():
        final = skills[b]
        half = Z95 * final.sigma
        g = len(mus)
        while g > 0 and abs(mus[g - 1] - final.mu) <= half:
            g -= 1
        score.settle.append(g + 1 if g < len(mus) else len(mus))
    if refit is None:
        calibrate(score, system, skills, trail, sigmas)
    conservative = {b: s.mu - K_SIGMA * s.sigma for b, s in skills.items()}
    kb = [b for b in known if b in conservative]
    if len(kb) >= 3:
        score.spearman_known = spearman([conservative[b] for b in kb], [known[b] for b in kb])
    mb = [b for b in ml if b in conservative]
    if len(mb) >= 3:
        score.spearman_ml = spearman([conservative[b] for b in mb], [ml[b] for b in mb])
    return score


def calibrate(
    score: Score,
    system: RatingSystem,
    skills: dict[str, Skill],
    trail: dict[str, list[float]],
    sigmas: dict[str, list[float]],
) -> None:
    """What a visitor sees of each bot's rating over its games.

    A bot has **settled** after game g when from then on it is never provisional
    (``provisional_games`` games played and sigma at most ``provisional_sigma``, the
    ladder's rule, ``elo.provisional``) and its rating stays inside its
    final 95 % interval (final mu ± 1.96 final sigma); a bot still provisional at the
    end never settled (counted as infinitely many games). The moves once settled are
    the rating changes |mu_t - mu_(t-1)| of the matches after that game.
    """
    score.calibrated = True
    threshold, least = system.provisional_sigma, system.provisional_games
    for b, mus in trail.items():
        sig = sigmas[b]
        final = skills[b]
        half = Z95 * final.sigma
        g = len(mus)
        while g >= least and sig[g - 1] <= threshold and abs(mus[g - 1] - final.mu) <= half:
            g -= 1
        # The states after games g + 1, g + 2, ... are all settled (mus[g] is after game g + 1).
        if g == len(mus):
            score.settled_after.append(math.inf)
        else:
            score.settled_after.append(float(g + 1))
            score.settled_moves += [abs(mus[t] - mus[t - 1]) for t in range(g + 1, len(mus))]
        if len(sig) >= 30:
            score.provisional_30.append(sig[29] > threshold or least > 30)
        if len(sig) >= 100:
            score.provisional_100.append(sig[99] > threshold or least > 100)
    score.lowest_rating = min(s.mu for s in skills.values())
    score.lowest_score = min(s.mu - K_SIGMA * s.sigma for s in skills.values())


def systems(refit_every: int) -> Iterator[RatingSystem]:
    for factory in BENCH_SYSTEMS.values():
        try:
            yield factory()
        except ImportError as exc:  # trueskill is the bench extra's
            print(f"skipped a system: {exc}", file=sys.stderr)
    yield MlRefit(refit_every)


SWEEP_SIGMA0 = (150.0, 200.0, 250.0, 300.0, 350.0)
SWEEP_TAU = (2.0, 5.0, 8.0, 12.0)
SWEEP_GAMMA = ("1", "sigma/c")


def sweep_systems() -> Iterator[RatingSystem]:
    """Plackett-Luce on the Elo scale (beta fixed by it, following the table size) over a
    grid of prior and dynamics."""
    for gamma in SWEEP_GAMMA:
        for sigma0 in SWEEP_SIGMA0:
            for tau in SWEEP_TAU:
                params = WengLinParams(
                    sigma0=sigma0, beta=BETA_ELO, tau=tau, gamma=gamma, per_seats=True
                )
                yield OpenSkillSystem(
                    f"pl s0={sigma0:.0f} tau={tau:.0f} gamma={gamma}",
                    "Plackett-Luce, Elo scale",
                    "PlackettLuce",
                    params,
                )


def sweep(name: str, games: Sequence[Game]) -> list[Score]:
    """The calibration grid, with Elo and the earlier default beside it."""
    chosen = [BENCH_SYSTEMS[k]() for k in ("elo", "plackett-luce-x60", "plackett-luce")]
    out = []
    for system in tqdm([*chosen, *sweep_systems()], desc=f"sweep {name}", unit="system"):
        out.append(replay(system, games, {}, {}))
    return out


def evaluate(name: str, games: Sequence[Game], known: dict[str, float], refit: int) -> list[Score]:
    reference = ml_plackett_luce((g.bots, g.ranks) for g in games)
    print(
        f"{name}: {len(games)} matches, {len({b for g in games for b in g.bots})} bots;"
        f" batch ML fit in {reference.iterations} iterations",
        file=sys.stderr,
    )
    out = []
    for system in tqdm(list(systems(refit)), desc=f"rating {name}", unit="system"):
        out.append(replay(system, games, known, reference.mu))
    return out


def markdown(sections: dict[str, list[Score]], meta: dict[str, Any]) -> str:
    lines = [
        f"Machine: {meta['machine']}; load {meta['load']}; engine {meta['engine']};"
        f" {meta['matches']} synthetic matches (seed {meta['seed']})."
        f" Produced by `bench/ratings_bench.py`.",
        "",
    ]
    for name, scores in sections.items():
        lines += [
            f"**{name}**",
            "",
            "| system | rank-1 log-loss | rank-1 acc. | pair log-loss | pair acc. |"
            " games to settle (median) | Spearman vs known | Spearman vs batch ML |"
            " top-10 changes /100 matches | s |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for s in scores:
            r = s.row()

            def f(v: Any, fmt: str = ".3f") -> str:
                return "-" if v is None else format(v, fmt)

            lines.append(
                f"| {s.system} | {f(r['rank1_logloss'])} | {f(r['rank1_accuracy'])} |"
                f" {f(r['pair_logloss'])} | {f(r['pair_accuracy'])} |"
                f" {f(r['games_to_settle_median'], '.0f')} | {f(r['spearman_known'])} |"
                f" {f(r['spearman_ml'])} | {f(r['top10_changes_per_100'], '.1f')} |"
                f" {f(r['seconds'], '.1f')} |"
            )
        lines.append("")
        lines += calibration_table(scores)
    return "\n".join(lines)


def calibration_table(scores: Sequence[Score]) -> list[str]:
    """The visitor's table: settling, provisional shares, moves once settled, lowest figures."""

    def f(v: Any, fmt: str) -> str:
        if v is None:
            return "-"
        if v == math.inf:
            return "never"
        return format(v, fmt)

    lines = [
        "| system | rank-1 log-loss | pair log-loss | games to settle (median / p90) |"
        " settled by 30 games | provisional after 30 | provisional after 100 |"
        " move once settled (median / p95) | lowest rating | lowest mu - 3 sigma |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in scores:
        if not s.calibrated:
            continue
        r = s.row()
        lines.append(
            f"| {s.system} | {f(r['rank1_logloss'], '.3f')} | {f(r['pair_logloss'], '.3f')} |"
            f" {f(r['games_to_settle_full_median'], '.0f')} /"
            f" {f(r['games_to_settle_full_p90'], '.0f')} | {f(r['settled_by_30'], '.0%')} |"
            f" {f(r['provisional_after_30'], '.0%')} | {f(r['provisional_after_100'], '.0%')} |"
            f" {f(r['settled_move_median'], '.1f')} / {f(r['settled_move_p95'], '.1f')} |"
            f" {f(r['lowest_rating'], '.0f')} | {f(r['lowest_score'], '.0f')} |"
        )
    lines.append("")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--refit", type=int, default=250, help="matches between batch refits")
    ap.add_argument("--ladder", help="also replay this ladder's recorded history")
    ap.add_argument("--out", type=Path, help="write the markdown table here")
    ap.add_argument("--json", type=Path, help="write the figures as JSON here")
    ap.add_argument(
        "--sweep",
        action="store_true",
        help="only the calibration grid of Plackett-Luce's prior and dynamics (Elo scale)",
    )
    args = ap.parse_args(argv)
    games = synthetic(args.matches, args.seed, args.workers)
    if args.sweep:
        early = len(games) // 4
        for name, part in ((f"first {early}", games[:early]), (f"all {len(games)}", games)):
            print(f"**calibration grid, synthetic, {name} matches**\n")
            print("\n".join(calibration_table(sweep(name, part))))
        return 0
    known = {n: s for n, (_, s) in population().items() if s is not None}
    early = len(games) // 4
    sections = {
        f"synthetic, first {early} matches (a young ladder)": evaluate(
            "synthetic-early", games[:early], known, args.refit
        ),
        f"synthetic, all {len(games)} matches": evaluate("synthetic", games, known, args.refit),
    }
    if args.ladder:
        history = ladder_history(args.ladder)
        if history:
            sections[f"ladder {args.ladder}"] = evaluate(args.ladder, history, {}, args.refit)
    meta = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "engine": ENGINE_VERSION,
        "matches": args.matches,
        "seed": args.seed,
    }
    text = markdown(sections, meta)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {"meta": meta, **{k: [s.row() for s in v] for k, v in sections.items()}},
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
