"""The final of a competition as a pure function: what to play next, or the result.

``final_step(config, seeds, records)`` replays the final from its complete deals
(``records``; the service calls it only when no deal of the final is open) and
answers either "play these deals" (tables, each with a number of duplicate deals
and a ``key`` the service stores with them) or "finished" with the result. The
same function drives the ladder's finals (``ladder.competitions.services``) and
the in-process bench (``bench/competition_final_bench.py``). No Django, no clock;
the bootstrap's RNG is seeded from the config and the records, so a step is
reproducible.

Formats (``Format``):

- ``round_robin``: every table of ``seats`` bots plays ``min_deals`` deals; then,
  while an adjacent pair of the first ``top`` places is not settled at
  ``confidence`` (``ladder.competitions.settle``) and the games stay under
  ``max_games``, every table of a bot of an unsettled pair gets one more deal.
- ``swiss`` (2 seats): Swiss rounds (``ladder.tournaments.formats.swiss_pairing``)
  of ``min_deals`` deals a pairing, a match-up won by the higher mean share;
  then extended like a round robin (more deals at the tables already met).
- ``single_elimination`` / ``double_elimination`` (2 seats,
  ``ladder.competitions.brackets``): each match-up plays deals in batches of
  ``min_deals`` until the sign test decides it or it reaches
  ``matchup_max_deals`` (a coin toss, said so).
- ``groups`` (3-4 seats): snake-seeded groups of ``seats``; each group's table
  plays until the line between its ``advance``-th and next place is settled (or
  ``group_max_deals``); the top ``advance`` of each group go on, until one table
  is left, which plays like a round robin of one table.
- ``multi_stage``: a first stage (``first``: swiss or groups), then a round
  robin of its top ``finalists``; the others keep their first-stage places.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, NotRequired, TypedDict

from ladder.competitions.brackets import (
    Bracket,
    Matchup,
    double_elimination,
    groups_snake,
    single_elimination,
)
from ladder.competitions.settle import (
    DealRecord,
    MatchupCall,
    Settlement,
    matchup_call,
    settle,
)
from ladder.tournaments.formats import swiss_pairing, swiss_rounds


class Format(StrEnum):
    ROUND_ROBIN = "round_robin"
    SWISS = "swiss"
    SINGLE_ELIMINATION = "single_elimination"
    DOUBLE_ELIMINATION = "double_elimination"
    GROUPS = "groups"
    MULTI_STAGE = "multi_stage"


KNOCKOUTS = {Format.SINGLE_ELIMINATION, Format.DOUBLE_ELIMINATION}


@dataclass(frozen=True)
class FinalConfig:
    """How a final is played (see the module for each field's role)."""

    format: Format = Format.ROUND_ROBIN
    seats: int = 2
    confidence: float = 0.95
    min_deals: int = 2
    max_games: int = 2000
    matchup_max_deals: int = 16
    group_max_deals: int = 12
    top: int = 4  # places whose order is to be settled (tables)
    advance: int = 2  # groups: how many of each group go on
    first: Format = Format.SWISS  # multi-stage: the first stage
    finalists: int = 4  # multi-stage: the round robin of the top N
    resamples: int = 400
    seed: int = 0

    def check(self, entrants: int) -> None:
        """ValueError naming what cannot be played."""
        if entrants < 2:
            raise ValueError("a final needs at least two entrants")
        if not 0.5 < self.confidence < 1:
            raise ValueError("confidence must be between 0.5 and 1")
        if self.min_deals < 1:
            raise ValueError("min_deals must be at least 1")
        two_seat = {Format.SWISS, *KNOCKOUTS}
        if self.format in two_seat and self.seats != 2:
            raise ValueError(f"{self.format} is played at 2 seats")
        if self.format == Format.GROUPS:
            if self.seats not in (3, 4):
                raise ValueError("groups are tables of 3 or 4 seats")
            if not 1 <= self.advance < self.seats - 1 + 1 or self.advance >= self.seats:
                raise ValueError(f"groups of {self.seats}: 1 to {self.seats - 1} advance")
        if self.format == Format.MULTI_STAGE:
            if self.first not in (Format.SWISS, Format.GROUPS):
                raise ValueError("a multi-stage final starts with swiss or groups")
            if not 2 <= self.finalists <= entrants:
                raise ValueError(f"finalists must be 2 to {entrants}")
        if self.format == Format.ROUND_ROBIN and entrants < self.seats:
            raise ValueError(f"a {self.seats}-seat round robin needs {self.seats} entrants")


@dataclass(frozen=True)
class Request:
    """Play ``deals`` duplicate deals of ``table`` (bots in seat order) under ``key``."""

    key: str
    table: tuple[int, ...]
    deals: int


@dataclass(frozen=True)
class Place:
    """A bot's final place and its interval (places it could hold at the confidence)."""

    bot: int
    place: int
    low: int
    high: int
    score: float | None = None


class Pairwise(TypedDict):
    """Bot ``a``'s mean share of the deals against ``b`` and its bootstrap interval."""

    a: int
    b: int
    deals: int
    share: float
    low: float
    high: float


class Standing(TypedDict):
    """A bot's line in a stage's standings; the figures once the stage is settled."""

    bot: int
    deals: int
    score: NotRequired[float]
    low: NotRequired[float]
    high: NotRequired[float]


@dataclass
class FinalResult:
    """The order, the adjacent places still a coin toss (a, b, P(a above b)), how many
    leading places are settled, and the pairwise shares of the top bots."""

    places: list[Place]
    coin_tosses: list[tuple[int, int, float]]
    settled_places: int
    pairwise: list[Pairwise]
    games: int
    capped: bool


@dataclass
class Step:
    """What to do now: ``play`` these, or ``result`` (finished). ``view`` is for pages."""

    play: list[Request] = field(default_factory=list)
    result: FinalResult | None = None
    view: list[dict[str, Any]] = field(default_factory=list)


def games_of(records: Sequence[DealRecord]) -> int:
    """Matches played: one per seat rotation of every deal."""
    return sum(len(r.table) for r in records)


class _Ctx:
    def __init__(self, config: FinalConfig, records: Sequence[DealRecord]) -> None:
        self.config = config
        self.records = records
        self.by_key: dict[str, list[DealRecord]] = {}
        for record in records:
            self.by_key.setdefault(record.key, []).append(record)
        self.games = games_of(records)
        self.rng = random.Random(f"{config.seed}:{len(records)}")

    def deals(self, key: str) -> list[Mapping[tuple[int, int], float]]:
        return [r.pairs for r in self.by_key.get(key, []) if r.pairs is not None]

    def count(self, key: str) -> int:
        return len(self.by_key.get(key, []))

    def settle(self, keys: Sequence[str], bots: Sequence[int], *, fit: bool = False) -> Settlement:
        chosen = [r for k in keys for r in self.by_key.get(k, [])]
        # Seeded by the stage's own deals: a finished stage reads the same when later
        # stages add deals, so it never reopens.
        rng = random.Random(f"{self.config.seed}:{keys[0] if keys else ''}:{len(chosen)}")
        return settle(
            chosen,
            bots,
            confidence=self.config.confidence,
            resamples=self.config.resamples,
            rng=rng,
            fit=fit,
        )


def final_step(config: FinalConfig, seeds: Sequence[int], records: Sequence[DealRecord]) -> Step:
    """The next step of the final of ``seeds`` (best first) given its complete ``records``."""
    config.check(len(seeds))
    ctx = _Ctx(config, records)
    if config.format in KNOCKOUTS:
        return _knockout(ctx, list(seeds))
    if config.format == Format.MULTI_STAGE:
        return _multi_stage(ctx, list(seeds))
    stage = _stage(ctx, config.format, "s0", list(seeds), top=min(config.top, len(seeds)))
    if stage.play:
        return Step(play=stage.play, view=stage.view)
    assert stage.settlement is not None
    result = _result(ctx, stage.settlement, stage.order, stage.tiers)
    result.coin_tosses += stage.tosses
    return Step(result=result, view=stage.view)


@dataclass
class _Stage:
    play: list[Request] = field(default_factory=list)
    view: list[dict[str, Any]] = field(default_factory=list)
    settlement: Settlement | None = None
    order: list[int] = field(default_factory=list)  # every bot, best first
    tiers: list[list[int]] = field(default_factory=list)
    tosses: list[tuple[int, int, float]] = field(default_factory=list)  # lines decided by a cap


def _stage(
    ctx: _Ctx, fmt: Format, prefix: str, bots: list[int], *, top: int, line: int | None = None
) -> _Stage:
    if fmt == Format.ROUND_ROBIN:
        tables = {
            f"{prefix}:t{'-'.join(map(str, t))}": t
            for t in itertools.combinations(bots, ctx.config.seats)
        }
        return _tables(ctx, prefix, "round robin", tables, bots, top=top)
    if fmt == Format.SWISS:
        return _swiss(ctx, prefix, bots, top=top, line=line)
    if fmt == Format.GROUPS:
        return _groups(ctx, prefix, bots, top=top)
    raise ValueError(f"no stage {fmt}")


def _tables(
    ctx: _Ctx,
    prefix: str,
    label: str,
    tables: Mapping[str, tuple[int, ...]],
    bots: list[int],
    *,
    top: int,
    max_per_table: int | None = None,
    line: int | None = None,
    fit: bool = False,
) -> _Stage:
    """Tables played until the first ``top`` places are settled (or only the line
    between places ``line`` and ``line + 1``), the games cap, or ``max_per_table``."""
    cfg = ctx.config
    missing = [
        Request(key, table, cfg.min_deals - ctx.count(key))
        for key, table in tables.items()
        if ctx.count(key) < cfg.min_deals
    ]
    keys = list(tables)
    view = {"stage": prefix, "kind": label, "tables": len(tables)}
    if missing:
        return _Stage(play=missing, view=[{**view, "standings": _standings(ctx, keys, bots)}])
    settlement = ctx.settle(keys, bots, fit=fit)
    above = settlement.above
    if line is not None:
        unsettled = [line - 1] if line - 1 < len(above) and above[line - 1] < cfg.confidence else []
    else:
        unsettled = [i for i, ok in enumerate(settlement.settled(top, cfg.confidence)) if not ok]
    hot = {settlement.order[i] for i in unsettled} | {settlement.order[i + 1] for i in unsettled}
    more = [
        Request(key, table, 1)
        for key, table in tables.items()
        if hot & set(table) and (max_per_table is None or ctx.count(key) < max_per_table)
    ]
    budget = cfg.max_games - ctx.games
    fits = []
    for request in more:
        if budget < len(request.table):
            break
        budget -= len(request.table)
        fits.append(request)
    rows = _standings(ctx, keys, bots, settlement)
    if fits:
        return _Stage(play=fits, view=[{**view, "standings": rows}])
    return _Stage(
        settlement=settlement,
        order=settlement.order,
        view=[{**view, "standings": rows, "done": True}],
    )


def _standings(
    ctx: _Ctx, keys: Sequence[str], bots: Sequence[int], settlement: Settlement | None = None
) -> list[Standing]:
    played: Counter[int] = Counter()
    for key in keys:
        for record in ctx.by_key.get(key, []):
            for bot in record.table:
                played[bot] += 1
    if settlement is None:
        return [{"bot": b, "deals": played[b]} for b in bots]
    return [
        {
            "bot": b,
            "deals": played[b],
            "score": round(settlement.scores[b], 4),
            "low": settlement.interval[b][0],
            "high": settlement.interval[b][1],
        }
        for b in settlement.order
    ]


def _swiss(ctx: _Ctx, prefix: str, bots: list[int], *, top: int, line: int | None = None) -> _Stage:
    """Swiss rounds of ``min_deals`` deals a pairing, then extended like a table stage."""
    cfg = ctx.config
    points: Counter[int] = Counter()
    played: set[frozenset[int]] = set()
    byes: list[int] = []
    balance: Counter[int] = Counter()
    tables: dict[str, tuple[int, ...]] = {}
    rounds = []
    for number in range(1, min(swiss_rounds(len(bots)), len(bots) - 1) + 1):
        rng = random.Random(f"{cfg.seed}:{prefix}:{number}")
        pairing = swiss_pairing(
            bots, {b: float(points[b]) for b in bots}, played, byes, balance, rng
        )
        pending = []
        row: list[dict[str, Any]] = []
        for a, b in pairing.pairs:
            key = f"{prefix}:t{min(a, b)}-{max(a, b)}"
            tables[key] = (a, b)
            deals = ctx.deals(key)
            if ctx.count(key) < cfg.min_deals:
                pending.append(Request(key, (a, b), cfg.min_deals - ctx.count(key)))
                row.append({"a": a, "b": b, "deals": ctx.count(key)})
                continue
            share = sum(d[(a, b)] for d in deals) / len(deals) if deals else 0.5
            row.append({"a": a, "b": b, "deals": ctx.count(key), "share": round(share, 4)})
            points[a] += 2 * (share > 0.5) + (share == 0.5)
            points[b] += 2 * (share < 0.5) + (share == 0.5)
        rounds.append({"round": number, "pairs": row, "bye": pairing.bye})
        view = [{"stage": prefix, "kind": "swiss", "rounds": rounds}]
        if pending:
            return _Stage(play=pending, view=view)
        for a, b in pairing.pairs:
            played.add(frozenset((a, b)))
            balance[a] += 1
            balance[b] -= 1
        if pairing.bye is not None:
            byes.append(pairing.bye)
            points[pairing.bye] += 2
    stage = _tables(ctx, prefix, "swiss", tables, bots, top=top, fit=True, line=line)
    stage.view = [{"stage": prefix, "kind": "swiss", "rounds": rounds, **stage.view[0]}]
    return stage


def _groups(ctx: _Ctx, prefix: str, bots: list[int], *, top: int) -> _Stage:
    """Rounds of snake-seeded groups; the top ``advance`` of each go on, until one table."""
    cfg = ctx.config
    alive = list(bots)
    tiers: list[list[int]] = []  # eliminated, earliest first
    view: list[dict[str, Any]] = []
    tosses: list[tuple[int, int, float]] = []
    number = 0
    while len(alive) > cfg.seats:
        number += 1
        groups = groups_snake(alive, cfg.seats)
        play: list[Request] = []
        standings = []
        results: list[list[int]] = []
        for g, group in enumerate(groups):
            key = f"{prefix}:g{number}.{g}"
            if len(group) <= cfg.advance:  # too small to eliminate anybody
                results.append(group)
                continue
            stage = _tables(
                ctx,
                key,
                "group",
                {key: tuple(group)},
                group,
                top=len(group),
                max_per_table=cfg.group_max_deals,
                line=cfg.advance,
            )
            play += stage.play
            standings.append({"group": g + 1, **stage.view[0]})
            results.append(stage.order)
            line = stage.settlement.above[cfg.advance - 1] if stage.settlement else 1.0
            if line < cfg.confidence:  # the group's cap decided who went on
                tosses.append(
                    (stage.order[cfg.advance - 1], stage.order[cfg.advance], round(line, 3))
                )
        view.append({"stage": prefix, "kind": "groups", "round": number, "groups": standings})
        if play:
            return _Stage(play=play, view=view)
        nxt = [
            b for depth in range(cfg.advance) for r in results if depth < len(r) for b in [r[depth]]
        ]
        out = [
            b
            for depth in range(cfg.advance, cfg.seats)
            for r in results
            if depth < len(r)
            for b in [r[depth]]
        ]
        if len(nxt) >= len(alive):  # nobody could be eliminated: play the rest as one table
            break
        tiers.append(out)
        alive = nxt
    key = f"{prefix}:final"
    final = _tables(ctx, key, "final table", {key: tuple(alive)}, alive, top=min(top, len(alive)))
    final.view = view + final.view
    if not final.play:
        final.order = final.order + [b for tier in reversed(tiers) for b in tier]
        final.tiers = list(reversed(tiers))
        final.tosses = tosses
    return final


def _multi_stage(ctx: _Ctx, seeds: list[int]) -> Step:
    cfg = ctx.config
    # The first stage only has to settle who goes on (the line below the finalists),
    # within half the games, and counts only its own: the round robin has the rest.
    stage_records = [r for r in ctx.records if r.key.startswith("s0:")]
    first_ctx = _Ctx(replace(cfg, max_games=cfg.max_games // 2), stage_records)
    first = _stage(
        first_ctx,
        cfg.first,
        "s0",
        seeds,
        top=cfg.finalists + 1,
        line=min(cfg.finalists, len(seeds) - 1),
    )
    if first.play:
        return Step(play=first.play, view=first.view)
    finalists = first.order[: cfg.finalists]
    rest = first.order[cfg.finalists :]
    rr = _stage(ctx, Format.ROUND_ROBIN, "s1", finalists, top=min(cfg.top, len(finalists)))
    view = first.view + rr.view
    if rr.play:
        return Step(play=rr.play, view=view)
    assert rr.settlement is not None and first.settlement is not None
    result = _result(ctx, rr.settlement, rr.order)
    offset = len(finalists)
    for i, bot in enumerate(rest):
        low, high = first.settlement.interval.get(bot, (offset + i + 1, offset + i + 1))
        score = first.settlement.scores.get(bot)
        result.places.append(
            Place(
                bot,
                offset + i + 1,
                max(low, offset + 1),
                max(high, offset + 1),
                None if score is None else round(score, 4),
            )
        )
    # The cut: when the first stage could not settle who went on, the last finalist
    # and the first one out are a coin toss, and no place from the cut down is settled.
    above = first.settlement.above
    cut = len(finalists) - 1
    if rest and cut < len(above) and above[cut] < cfg.confidence:
        result.coin_tosses.append((finalists[-1], rest[0], round(above[cut], 3)))
        result.settled_places = min(result.settled_places, cut)
    return Step(result=result, view=view)


def _result(
    ctx: _Ctx, settlement: Settlement, order: list[int], tiers: Sequence[list[int]] = ()
) -> FinalResult:
    """Places with their bootstrap intervals (the eliminated of a group round share the
    places of their round), coin tosses, pairwise shares of the top."""
    cfg = ctx.config
    places = []
    for i, bot in enumerate(settlement.order, start=1):
        low, high = settlement.interval.get(bot, (i, i))
        places.append(Place(bot, i, low, high, round(settlement.scores[bot], 4)))
    position = len(places) + 1
    for tier in tiers:
        for bot in tier:
            places.append(Place(bot, len(places) + 1, position, position + len(tier) - 1))
        position += len(tier)
    assert [p.bot for p in places] == list(order)
    tosses = [
        (settlement.order[i], settlement.order[i + 1], round(p, 3))
        for i, p in enumerate(settlement.above)
        if p < cfg.confidence
    ]
    settled = 0
    for p in settlement.above:
        if p < cfg.confidence:
            break
        settled += 1
    # Places 1..settled+1 are fixed when the first `settled` adjacent lines hold.
    settled_places = settled + 1 if settled == len(settlement.above) else settled
    return FinalResult(
        places=places,
        coin_tosses=tosses,
        settled_places=settled_places,
        pairwise=_pairwise(ctx, order[: min(cfg.top, len(order))]),
        games=ctx.games,
        capped=ctx.games + min(cfg.seats, 4) > cfg.max_games,
    )


def _pairwise(ctx: _Ctx, top: Sequence[int]) -> list[Pairwise]:
    """For each pair of the top bots that met: a's mean share over b, a bootstrap interval."""
    cfg = ctx.config
    out: list[Pairwise] = []
    for a, b in itertools.combinations(top, 2):
        shares = [r.pairs[(a, b)] for r in ctx.records if r.pairs is not None and (a, b) in r.pairs]
        if not shares:
            continue
        means = sorted(
            sum(shares[ctx.rng.randrange(len(shares))] for _ in shares) / len(shares)
            for _ in range(cfg.resamples)
        )
        tail = (1 - cfg.confidence) / 2
        out.append(
            {
                "a": a,
                "b": b,
                "deals": len(shares),
                "share": round(sum(shares) / len(shares), 4),
                "low": round(means[int(tail * (len(means) - 1))], 4),
                "high": round(means[int((1 - tail) * (len(means) - 1))], 4),
            }
        )
    return out


def _knockout(ctx: _Ctx, seeds: list[int]) -> Step:
    cfg = ctx.config
    calls: dict[str, MatchupCall] = {}

    def result(m: Matchup) -> int | None:
        call = matchup_call(
            m.a,
            m.b,
            ctx.deals(m.key),
            confidence=cfg.confidence,
            min_deals=cfg.min_deals,
            max_deals=cfg.matchup_max_deals,
        )
        calls[m.key] = call
        return call.leader if call.decided and ctx.count(m.key) >= cfg.min_deals else None

    if cfg.format == Format.SINGLE_ELIMINATION:
        bracket = single_elimination(seeds, result)
    else:
        bracket = double_elimination(seeds, result)
    view = [{"stage": "s0", "kind": cfg.format.value, "rounds": _bracket_view(ctx, bracket, calls)}]
    if bracket.pending:
        play = []
        for m in bracket.pending:
            have = ctx.count(m.key)
            want = (
                cfg.min_deals
                if have < cfg.min_deals
                else min(cfg.min_deals, cfg.matchup_max_deals - have)
            )
            play.append(Request(m.key, (m.a, m.b), max(1, want)))
        return Step(play=play, view=view)
    assert bracket.placing is not None
    places = []
    position = 1
    for tier in bracket.placing:
        for bot in tier:
            places.append(Place(bot, position, position, position + len(tier) - 1))
        position += len(tier)
    # The matches that decided adjacent places: a coin toss when the cap decided them.
    tosses = []
    for rnd in bracket.rounds:
        for m in rnd:
            call = calls.get(m.key)
            if call is not None and call.coin_toss:
                loser = m.b if call.leader == m.a else m.a
                tosses.append((call.leader, loser, round(1 - call.p_value, 3)))
    order = [p.bot for p in places]
    top_tosses = {frozenset((a, b)) for a, b, _ in tosses}
    settled = 0
    for a, b in itertools.pairwise(order):
        if (
            frozenset((a, b)) in top_tosses
            or places[order.index(b)].low == places[order.index(a)].low
        ):
            break
        settled += 1
    result_ = FinalResult(
        places=places,
        coin_tosses=tosses,
        settled_places=settled + (1 if settled == len(order) - 1 else 0),
        pairwise=_pairwise(ctx, order[: min(cfg.top, len(order))]),
        games=ctx.games,
        capped=bool(tosses),
    )
    return Step(result=result_, view=view)


def _bracket_view(
    ctx: _Ctx, bracket: Bracket, calls: Mapping[str, Any]
) -> list[list[dict[str, Any]]]:
    rounds = []
    for rnd in bracket.rounds:
        row = []
        for m in rnd:
            call = calls.get(m.key)
            decided = call is not None and call.decided and ctx.count(m.key) >= ctx.config.min_deals
            row.append(
                {
                    "key": m.key,
                    "label": m.label,
                    "a": m.a,
                    "b": m.b,
                    "deals": ctx.count(m.key),
                    "winner": call.leader if call is not None and decided else None,
                    "share": round(call.share, 4) if call else None,
                    "p_value": round(call.p_value, 4) if call else None,
                    "coin_toss": bool(call and decided and call.coin_toss),
                }
            )
        rounds.append(row)
    return rounds
