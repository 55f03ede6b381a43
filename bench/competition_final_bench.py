"""A competition's final between bots of known strength: does it settle the right order?

    .venv/bin/python bench/competition_final_bench.py [--bots 16] [--format all]
        [--confidence 0.95] [--max-games 4000] [--seed 0] [--json]

Not a test: the figures of docs/competitions.md. Bot i (of n) plays the heuristic
house player but, at each decision, a random legal action with probability
i / (n - 1): bot 0 is the pure heuristic, the last bot plays at random, and the
strengths in between are graded. The final is the ladder's own pure
``ladder.competitions.final.final_step``, its deals played in process with the
rules engine (every seat rotation of one seed), so what is measured is the
format and its stop rule, not the workers. The finalists are seeded at random
(as if qualification said nothing), so a knockout can meet strong bots early.

For every format it prints the games played, how many of the leading places
were settled at the confidence, the places still a coin toss, and whether the
final order matches the known strengths (Kendall's tau over all places; the top
four exact or not).
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.players import HeuristicPlayer, RandomPlayer
from engine.rules import GameConfig, new_game
from engine.simulate import play_out
from ladder.competitions.final import FinalConfig, Format, final_step
from ladder.competitions.settle import DealRecord, pair_shares
from ladder.tournaments.rotations import rotations

FORMATS = {
    "round_robin": {"format": Format.ROUND_ROBIN},
    "swiss": {"format": Format.SWISS},
    "single_elimination": {"format": Format.SINGLE_ELIMINATION},
    "double_elimination": {"format": Format.DOUBLE_ELIMINATION},
    "groups": {"format": Format.GROUPS, "seats": 4, "advance": 2},
    "multi_stage": {"format": Format.MULTI_STAGE, "first": Format.SWISS, "finalists": 6},
}


class Mixed:
    """The heuristic, but a random legal action with probability ``rate`` per decision."""

    def __init__(self, rng: random.Random, rate: float) -> None:
        self.rng = rng
        self.rate = rate
        self.heuristic = HeuristicPlayer(random.Random(rng.random()))
        self.random = RandomPlayer(random.Random(rng.random()))

    def act(self, observation: dict[str, Any], legal: list[Any]) -> Any:
        if self.rng.random() < self.rate:
            return self.random.act(observation, legal)
        return self.heuristic.act(observation, legal)


def play_deal(
    table: tuple[int, ...], rates: dict[int, float], seed: int, ruleset: str
) -> list[list[int]]:
    """Every rotation of ``table`` on one seed: each bot's rank, in table order."""
    out = []
    for r, seated in enumerate(rotations(list(table))):
        state = new_game(
            GameConfig(seed=seed, num_seats=len(seated), difficulty="normal", ruleset=ruleset)
        )
        players = [Mixed(random.Random(f"{seed}:{r}:{s}"), rates[b]) for s, b in enumerate(seated)]
        play_out(state, lambda seat, obs, legal, ps=players: ps[seat].act(obs, legal))
        ranks = state.result["ranks"]  # type: ignore[index]
        by_bot = {b: ranks[s] for s, b in enumerate(seated)}
        out.append([by_bot[b] for b in table])
    return out


def kendall_tau(order: list[int], truth: list[int]) -> float:
    position = {b: i for i, b in enumerate(order)}
    concordant = discordant = 0
    for a, b in itertools.combinations(truth, 2):  # a truly better than b
        if position[a] < position[b]:
            concordant += 1
        else:
            discordant += 1
    return (concordant - discordant) / max(1, concordant + discordant)


def run(name: str, args: argparse.Namespace) -> dict[str, Any]:
    n = args.bots
    rates = {b: b / (n - 1) for b in range(n)}  # bot 0 strongest
    truth = list(range(n))
    rng = random.Random(args.seed)
    seeds = list(truth)
    if args.seeding == "random":
        rng.shuffle(seeds)
    config = FinalConfig(
        confidence=args.confidence,
        max_games=args.max_games,
        top=args.top,
        resamples=args.resamples,
        seed=args.seed,
        **FORMATS[name],  # type: ignore[arg-type]
    )
    records: list[DealRecord] = []
    started = time.monotonic()
    deal_seed = args.seed * 1_000_003
    steps = 0
    while True:
        step = final_step(config, seeds, records)
        steps += 1
        if step.result is not None:
            break
        for request in step.play:
            for _ in range(request.deals):
                deal_seed += 1
                ranks = play_deal(request.table, rates, deal_seed, args.ruleset)
                records.append(
                    DealRecord(request.key, request.table, pair_shares(request.table, ranks))
                )
        print(f"  {name}: step {steps}, {len(records)} deals", file=sys.stderr, flush=True)
    result = step.result
    order = [p.bot for p in result.places]
    return {
        "format": name,
        "seats": config.seats,
        "games": result.games,
        "deals": len(records),
        "settled_places": result.settled_places,
        "coin_tosses": [(a, b, p) for a, b, p in result.coin_tosses],
        "order": order,
        "intervals": [(p.bot, p.low, p.high) for p in result.places],
        "top4_exact": order[:4] == truth[:4],
        "winner_is_strongest": order[0] == 0,
        "kendall_tau": round(kendall_tau(order, truth), 3),
        "capped": result.capped,
        "seconds": round(time.monotonic() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=16)
    parser.add_argument("--format", default="all", choices=["all", *FORMATS])
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--max-games", type=int, default=4000)
    parser.add_argument("--top", type=int, default=4, help="places whose order is settled")
    parser.add_argument("--resamples", type=int, default=300)
    parser.add_argument("--ruleset", default="dd-2")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--seeding",
        choices=["random", "strength"],
        default="random",
        help="finalists seeded at random, or by their true strength (a qualification that worked)",
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    names = list(FORMATS) if args.format == "all" else [args.format]
    rows = [run(name, args) for name in names]
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    print(
        f"{args.bots} bots, bot i plays at random with probability i/{args.bots - 1} "
        f"(bot 0 strongest); seeding {args.seeding}; confidence {args.confidence}, "
        f"cap {args.max_games} games"
    )
    print(
        f"{'format':<20}{'games':>7}{'settled':>9}{'tau':>7}"
        "  top-4 exact  winner  order (first 8)  coin tosses"
    )
    for r in rows:
        print(
            f"{r['format']:<20}{r['games']:>7}{r['settled_places']:>9}{r['kendall_tau']:>7}"
            f"  {r['top4_exact']!s:<11}  {r['winner_is_strongest']!s:<6}  {r['order'][:8]}"
            f"  {r['coin_tosses'][:4]}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
