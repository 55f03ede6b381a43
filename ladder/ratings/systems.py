"""Rating systems for 2-4-seat matches, on one scale, as pure functions.

No Django import: the recording service, ``rerate`` and ``bench/ratings_bench.py``
run the very same code. A system turns the skills of a match's seats and their
ranks (1 = best, equal numbers tie) into new skills, and predicts a match
before it is played (the chance of each seat ranking first, and of one seat
ranking above another) — what the benchmark scores.

Every system reports a skill as a mean ``mu`` and an uncertainty ``sigma`` in
rating points around a start of 1500:

- ``elo``: the ladder's historical pairwise Elo (``ladder.common.elo``), in
  integer hundredths exactly as it always was; its sigma is the standard error
  of that module's model, ``347 / sqrt(games)``, not a state of its own.
- ``plackett-luce`` and ``bradley-terry``: Weng and Lin's Bayesian
  approximation (the ``openskill`` library's ``PlackettLuce`` and
  ``BradleyTerryFull``) on the Elo scale (``BETA_ELO``) with the prior and
  dynamics of ``ELO_SCALE``, chosen by ``bench/ratings_bench.py``; the earlier
  default (openskill's defaults times 60, ``OPENSKILL_X60``) stays in the benchmark.
- ``trueskill``: the ``trueskill`` library at the same scale (benchmark only:
  an optional dependency).

``ml_plackett_luce`` is the reference: a batch maximum-likelihood fit of the
Plackett-Luce model over all games at once (Hunter's MM algorithm), which the
online systems should approach; a finished season's official table uses it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ladder.common import elo

START = 1500.0
SCALE = 60.0
"""Weng-Lin (openskill) defaults times this: mu 25 -> 1500, sigma 25/3 -> 500."""
ELO_POINTS_PER_NAT = 400.0 / math.log(10)
"""The Elo scale: a strength ratio of e is this many points (≈ 173.7)."""


@dataclass(frozen=True)
class Skill:
    """A seat's rating before or after a match: mean and uncertainty in points, games."""

    mu: float
    sigma: float
    games: int = 0


PROVISIONAL_SIGMA = elo.DEFAULT_PROVISIONAL_SIGMA / elo.SCALE
"""sigma (points, 135) above which a rating is provisional, in every system (a 95 %
interval wider than ± 265 points); and before ``PROVISIONAL_GAMES`` games it is whatever
its sigma (``elo.provisional``). Elo's sigma is below it from its 8th game, so Elo keeps
its historical "fewer than 10 games"; for the Weng-Lin systems ``bench/ratings_bench.py``
chose it (docs/ratings.md)."""
PROVISIONAL_GAMES = 10


class RatingSystem:
    """One way of rating matches; subclasses fill in the three methods."""

    key = ""
    label = ""
    provisional_sigma = PROVISIONAL_SIGMA
    provisional_games = PROVISIONAL_GAMES

    def initial(self) -> Skill:
        raise NotImplementedError

    def update(self, skills: Sequence[Skill], ranks: Sequence[int]) -> list[Skill]:
        """The seats' skills after a match they finished with ``ranks``."""
        raise NotImplementedError

    def pair_probability(self, a: Skill, b: Skill) -> float:
        """The chance that a seat of skill ``a`` ranks above one of skill ``b``."""
        raise NotImplementedError

    def first_probabilities(self, skills: Sequence[Skill]) -> list[float]:
        """Each seat's chance of ranking first (they sum to 1).

        Default: proportional to the product of its pairwise chances of beating
        each other seat, normalized (exact for two seats).
        """
        weights = []
        for i, a in enumerate(skills):
            w = 1.0
            for j, b in enumerate(skills):
                if i != j:
                    w *= self.pair_probability(a, b)
            weights.append(w)
        total = sum(weights) or 1.0
        return [w / total for w in weights]


def elo_sigma(games: int) -> float:
    """Elo's standard error after ``games`` games (one game's for none)."""
    return elo.SE_PER_GAME / math.sqrt(max(games, 1))


class EloSystem(RatingSystem):
    """Pairwise Elo (``ladder.common.elo``), rounded to hundredths exactly as stored."""

    key = "elo"
    label = "Elo (pairwise, K 32)"

    def __init__(self, k: float = elo.DEFAULT_K, start: float = START) -> None:
        self.k = k
        self.start = start

    def initial(self) -> Skill:
        return Skill(self.start, elo_sigma(0), 0)

    def update(self, skills: Sequence[Skill], ranks: Sequence[int]) -> list[Skill]:
        before = [round(s.mu * elo.SCALE) for s in skills]
        deltas = elo.rate(before, ranks, self.k)
        return [
            Skill((r + d) / elo.SCALE, elo_sigma(s.games + 1), s.games + 1)
            for s, r, d in zip(skills, before, deltas, strict=True)
        ]

    def pair_probability(self, a: Skill, b: Skill) -> float:
        return 1.0 / (1.0 + 10.0 ** ((b.mu - a.mu) / 400.0))

    def first_probabilities(self, skills: Sequence[Skill]) -> list[float]:
        """Luce's choice rule on the Elo strengths ``10 ** (R / 400)``."""
        top = max(s.mu for s in skills)
        weights = [10.0 ** ((s.mu - top) / 400.0) for s in skills]
        total = sum(weights)
        return [w / total for w in weights]


def gamma_sigma_over_c(c: float, k: int, mu: float, sigma_squared: float, *_: Any) -> float:
    """openskill's default damping of the sigma update: sigma / c (Weng and Lin's first
    choice). It makes sigma shrink ever slower as it nears beta: a bot stays "uncertain"
    for hundreds of games, which is what the ladder measured and left behind."""
    return math.sqrt(sigma_squared) / c


def gamma_one(c: float, k: int, mu: float, sigma_squared: float, *_: Any) -> float:
    """No damping: sigma^2 shrinks by the match's whole information (Weng and Lin's
    gamma = 1), so 1 / sigma^2 grows about linearly with the games, as Elo's does."""
    return 1.0


@dataclass(frozen=True)
class WengLinParams:
    """The prior and dynamics of a Weng-Lin system, in rating points.

    ``beta`` is the spread of one game's performance; ``sigma0`` the uncertainty of a
    new bot; ``tau`` the skill drift added (in quadrature) before every match, which
    keeps a settled rating able to follow a bot that changes; ``gamma`` the damping of
    the sigma update (``"sigma/c"``: openskill's default, ``"1"``: none).
    """

    sigma0: float
    beta: float
    tau: float
    gamma: str = "1"
    per_seats: bool = False
    """Plackett-Luce only: beta * sqrt(2 / n) in a match of n seats, so the model's spread
    between settled bots, c = sqrt(n) * beta_n, is the same at every table size (the
    Elo-scale Luce model, ``10 ** (rating / 400)``, at 2, 3 and 4 seats alike, as the
    batch reference assumes); openskill's own c grows with the seats."""

    def model_kwargs(self, seats: int = 2) -> dict[str, Any]:
        return {
            "mu": START,
            "sigma": self.sigma0,
            "beta": self.beta * math.sqrt(2 / seats) if self.per_seats else self.beta,
            "tau": self.tau,
            "gamma": gamma_one if self.gamma == "1" else gamma_sigma_over_c,
        }


BETA_ELO = ELO_POINTS_PER_NAT / math.sqrt(2)
"""beta (≈ 122.8 points) that puts the Weng-Lin models on the Elo scale: between two
settled bots (sigma small) the model's spread is c = sqrt(2) * beta = 400 / ln 10, so
the chance that one ranks above the other is ``1 / (1 + 10 ** (-gap / 400))``, Elo's
own curve: 400 points is 10 : 1 in a two-seat game."""

ELO_SCALE = WengLinParams(sigma0=250.0, beta=BETA_ELO, tau=7.0, gamma="1", per_seats=True)
"""The ladder's Weng-Lin systems: Elo scale, and the prior and dynamics chosen by
``bench/ratings_bench.py`` (docs/ratings.md, "Calibrated"): a bot of fixed strength
leaves provisional and stays inside its final interval within about 30 games of 2-4
seats (median), with a lower log-loss than the earlier default's (first place and
pairwise, young ladder and long history). Plackett-Luce's beta follows the table size
(``per_seats``): 400 points is 10 : 1 for first place at 2, 3 and 4 seats alike."""

OPENSKILL_X60 = WengLinParams(
    sigma0=25.0 / 3 * SCALE, beta=25.0 / 6 * SCALE, tau=25.0 / 300 * SCALE, gamma="sigma/c"
)
"""The earlier default (openskill's defaults times 60: sigma 500, beta 250, tau 5, its
sigma/c damping): not the Elo scale (a 400-point gap was about 3 : 1) and sigma still
about 120 after 246 two-seat games. Kept for the benchmark's comparison."""


class OpenSkillSystem(RatingSystem):
    """Weng-Lin Bayesian rating through an ``openskill`` model, with ``params``."""

    def __init__(
        self, key: str, label: str, model_name: str, params: WengLinParams = ELO_SCALE
    ) -> None:
        from openskill import models

        self.key, self.label, self.params = key, label, params
        self.plackett_luce = model_name == "PlackettLuce"
        per_seats = params.per_seats and self.plackett_luce
        self.models: dict[int, Any] = {
            n: getattr(models, model_name)(**params.model_kwargs(n if per_seats else 2))
            for n in (2, 3, 4)
        }
        self.model: Any = self.models[2]

    def _model(self, seats: int) -> Any:
        return self.models.get(seats, self.model)

    def initial(self) -> Skill:
        return Skill(self.model.mu, self.model.sigma, 0)

    def update(self, skills: Sequence[Skill], ranks: Sequence[int]) -> list[Skill]:
        model = self._model(len(skills))
        teams = model.rate(
            [[model.rating(mu=s.mu, sigma=s.sigma)] for s in skills],
            ranks=[float(r) for r in ranks],
        )
        return [
            Skill(float(t[0].mu), float(t[0].sigma), s.games + 1)
            for s, t in zip(skills, teams, strict=True)
        ]

    def _spread(self, skills: Sequence[Skill]) -> float:
        """The model's own scale c of a match: sqrt(sum of sigma^2 + beta^2) over its seats."""
        beta = self._model(len(skills)).beta
        return math.sqrt(sum(s.sigma**2 + beta**2 for s in skills))

    def pair_probability(self, a: Skill, b: Skill) -> float:
        """The model's own likelihood of a above b (logistic in (mu_a - mu_b) / c), not the
        library's ``predict_win`` (a normal approximation shared by all its models)."""
        return 1.0 / (1.0 + math.exp((b.mu - a.mu) / self._spread([a, b])))

    def first_probabilities(self, skills: Sequence[Skill]) -> list[float]:
        if not self.plackett_luce:
            return super().first_probabilities(skills)
        c = self._spread(skills)
        top = max(s.mu for s in skills)
        weights = [math.exp((s.mu - top) / c) for s in skills]
        return [w / sum(weights) for w in weights]


class TrueSkillSystem(RatingSystem):
    """TrueSkill (the ``trueskill`` library) at the same scale, for the benchmark."""

    key = "trueskill"
    label = "TrueSkill"

    def __init__(self) -> None:
        import trueskill  # type: ignore[import-untyped]

        self.env = trueskill.TrueSkill(
            mu=25.0 * SCALE,
            sigma=25.0 / 3 * SCALE,
            beta=25.0 / 6 * SCALE,
            tau=25.0 / 300 * SCALE,
            draw_probability=0.02,
            backend=None,
        )

    def initial(self) -> Skill:
        return Skill(self.env.mu, self.env.sigma, 0)

    def update(self, skills: Sequence[Skill], ranks: Sequence[int]) -> list[Skill]:
        groups = [(self.env.create_rating(s.mu, s.sigma),) for s in skills]
        rated = self.env.rate(groups, ranks=[r - 1 for r in ranks])
        return [
            Skill(float(g[0].mu), float(g[0].sigma), s.games + 1)
            for s, g in zip(skills, rated, strict=True)
        ]

    def pair_probability(self, a: Skill, b: Skill) -> float:
        spread = math.sqrt(2 * self.env.beta**2 + a.sigma**2 + b.sigma**2)
        return 0.5 * (1.0 + math.erf((a.mu - b.mu) / (spread * math.sqrt(2))))


def _plackett_luce() -> RatingSystem:
    return OpenSkillSystem(
        "plackett-luce", "Weng-Lin Plackett-Luce on the Elo scale (openskill)", "PlackettLuce"
    )


def _plackett_luce_x60() -> RatingSystem:
    return OpenSkillSystem(
        "plackett-luce-x60",
        "Weng-Lin Plackett-Luce, openskill defaults x 60 (the earlier default)",
        "PlackettLuce",
        OPENSKILL_X60,
    )


def _bradley_terry() -> RatingSystem:
    return OpenSkillSystem(
        "bradley-terry",
        "Weng-Lin Bradley-Terry on the Elo scale, full pairing (openskill)",
        "BradleyTerryFull",
    )


LADDER_SYSTEMS: dict[str, Callable[[], RatingSystem]] = {
    "elo": EloSystem,
    "plackett-luce": _plackett_luce,
    "bradley-terry": _bradley_terry,
}
"""The systems a ladder may rate with (``LADDER_LADDERS``' ``system``)."""

SYSTEM_NAMES: dict[str, str] = {
    "elo": "Elo (pairwise)",
    "plackett-luce": "Plackett\u2013Luce (Weng\u2013Lin), on the Elo scale",
    "bradley-terry": "Bradley\u2013Terry (Weng\u2013Lin), on the Elo scale",
}
"""What the pages call each ladder system (the key stays what the API and settings say)."""


def system_name(key: str) -> str:
    """A system's name for a reader; the key itself for one this version does not know."""
    return SYSTEM_NAMES.get(key, key)


BENCH_SYSTEMS: dict[str, Callable[[], RatingSystem]] = {
    **LADDER_SYSTEMS,
    "plackett-luce-x60": _plackett_luce_x60,
    "trueskill": TrueSkillSystem,
}


def system_get(key: str) -> RatingSystem:
    """A ladder system by key; ValueError names the known ones."""
    try:
        return LADDER_SYSTEMS[key]()
    except KeyError:
        raise ValueError(
            f"unknown rating system {key!r}; known: {', '.join(LADDER_SYSTEMS)}"
        ) from None


# --- the reference: batch maximum-likelihood Plackett-Luce -----------------------------


@dataclass(frozen=True)
class Fitted:
    """A batch fit: each player's strength in Elo-scale points and its standard error."""

    mu: dict[Any, float]
    sigma: dict[Any, float]
    iterations: int


def _stages(ranks: Sequence[int]) -> list[tuple[int, list[int]]]:
    """Plackett-Luce choice stages of one game: (chosen seat, seats still in play).

    Seats are chosen best rank first; seats that tie are each chosen from the
    set that still holds all of them (a tie counts as both orders half-way).
    """
    order = sorted(range(len(ranks)), key=lambda s: ranks[s])
    stages = []
    for pos, seat in enumerate(order):
        first_equal = next(p for p in range(len(order)) if ranks[order[p]] == ranks[seat])
        remaining = order[first_equal:]
        if pos < len(order) - 1 or first_equal < pos:
            stages.append((seat, remaining))
    return stages


def ml_plackett_luce(
    games: Iterable[tuple[Sequence[Any], Sequence[int]]],
    *,
    prior_games: float = 1.0,
    tol: float = 1e-4,
    max_iterations: int = 1000,
    start: dict[Any, float] | None = None,
) -> Fitted:
    """Fit Plackett-Luce strengths to ``games`` (players by seat, ranks) by Hunter's MM.

    Each player also plays ``prior_games`` virtual games against a fixed player
    of strength 1 (wins half of them), so a bot that never lost (or won) keeps a
    finite rating. It stops when no strength moves by more than ``tol`` (in log
    strength: 0.02 Elo points) in an iteration; ``start`` (points, e.g. an
    earlier fit) warm-starts it. Strengths are reported as ``1500 + 173.7 * ln(gamma)`` (the
    Elo scale, anchored by the virtual player) with standard errors from the
    model's Fisher information.
    """
    events: list[tuple[Any, list[Any]]] = []
    players: set[Any] = set()
    for bots, ranks in games:
        players.update(bots)
        for seat, remaining in _stages(ranks):
            events.append((bots[seat], [bots[s] for s in remaining]))
    gamma = {
        p: math.exp(((start or {}).get(p, START) - START) / ELO_POINTS_PER_NAT) for p in players
    }
    wins: dict[Any, float] = dict.fromkeys(players, prior_games / 2)
    for chosen, _ in events:
        wins[chosen] += 1.0
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007 (reported)
        denominators = {p: prior_games / (gamma[p] + 1.0) for p in players}
        for _, remaining in events:
            inv = 1.0 / sum(gamma[p] for p in remaining)
            for p in remaining:
                denominators[p] += inv
        new = {p: wins[p] / denominators[p] for p in players}
        change = max((abs(math.log(new[p] / gamma[p])) for p in players), default=0.0)
        gamma = new
        if change < tol:
            break
    info = {p: prior_games * gamma[p] / (gamma[p] + 1.0) ** 2 for p in players}
    for _, remaining in events:
        total = sum(gamma[p] for p in remaining)
        for p in remaining:
            share = gamma[p] / total
            info[p] += share * (1.0 - share)
    return Fitted(
        mu={p: START + ELO_POINTS_PER_NAT * math.log(gamma[p]) for p in players},
        sigma={p: ELO_POINTS_PER_NAT / math.sqrt(info[p]) for p in players},
        iterations=iterations,
    )
