"""Play many in-process games between bots and summarise how they end.

    python -m engine.simulate --games 400 --players 4 --difficulty normal \
        --ruleset dd-2 --bots heuristic,random --seed 0 [--json] [--check]

Game i uses seed S+i. `--bots` names the bots of seats 0..n-1 (a shorter list
is padded with its last name, so `heuristic,random` is one heuristic seat
against random seats); the line-up rotates one seat per game, so over n
consecutive games every bot sits in every seat equally often. Single-choice
decisions are played by the engine (`apply_forced`); bots are asked only when
there is a choice. `--check` verifies card conservation after every action,
fails if the 400-turn guard ever fires (rules §9.8-9.9), and replays every
game's record to check it gives the identical events and result.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.players import PLAYERS
from engine.rules import (
    RULESETS,
    Action,
    GameConfig,
    State,
    build_info,
    build_warning,
    new_game,
    replay_record,
)
from engine.rules.ruleset import DIFFICULTIES
from engine.rules.shapes import Observation


class CheckFailed(AssertionError):
    """A `--check` invariant broke: that is a rules bug, not a simulation result."""


@dataclass
class GameOutcome:
    """What one game contributes to the summary."""

    seed: int
    lineup: list[str]
    reason: str
    winner: int
    turns: int
    ranks: list[int]
    decisions: int
    actions: int


@dataclass
class Summary:
    games: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    turns: list[int] = field(default_factory=list)
    seat_rank1: list[int] = field(default_factory=list)
    bot_rank1: Counter[str] = field(default_factory=Counter)
    bot_seats: Counter[str] = field(default_factory=Counter)
    bot_wins: Counter[str] = field(default_factory=Counter)
    decisions: int = 0
    actions: int = 0
    seconds: float = 0.0

    def add(self, game: GameOutcome) -> None:
        if not self.seat_rank1:
            self.seat_rank1 = [0] * len(game.ranks)
        self.games += 1
        self.reasons[game.reason] += 1
        self.turns.append(game.turns)
        for seat, (bot, rank) in enumerate(zip(game.lineup, game.ranks, strict=True)):
            self.bot_seats[bot] += 1
            if rank == 1:
                self.seat_rank1[seat] += 1
                self.bot_rank1[bot] += 1
            if game.winner == seat:
                self.bot_wins[bot] += 1
        self.decisions += game.decisions
        self.actions += game.actions

    def to_dict(self) -> dict[str, Any]:
        n = max(self.games, 1)
        turns = sorted(self.turns)
        p90 = turns[min(len(turns) - 1, int(0.9 * len(turns)))] if turns else 0
        secs = max(self.seconds, 1e-9)
        return {
            "games": self.games,
            "end_reasons": {r: c / n for r, c in sorted(self.reasons.items())},
            "won_share": self.reasons.get("won", 0) / n,
            "turns_mean": sum(turns) / n if turns else 0.0,
            "turns_p90": p90,
            "turns_max": turns[-1] if turns else 0,
            "seat_rank1_share": [c / n for c in self.seat_rank1],
            "bot_rank1_share": {
                b: self.bot_rank1[b] / self.bot_seats[b] for b in sorted(self.bot_seats)
            },
            "bot_win_share": {
                b: self.bot_wins[b] / self.bot_seats[b] for b in sorted(self.bot_seats)
            },
            "seconds": self.seconds,
            "games_per_s": self.games / secs,
            "decisions": self.decisions,
            "decisions_per_s": self.decisions / secs,
            "actions": self.actions,
            "actions_per_s": self.actions / secs,
        }


def lineup_for(bots: Sequence[str], num_seats: int, game_index: int) -> list[str]:
    """The bot of each seat in game `game_index`: pad, then rotate one seat per game."""
    base = list(bots)[:num_seats]
    base += [base[-1]] * (num_seats - len(base))
    shift = game_index % num_seats
    return [base[(s - shift) % num_seats] for s in range(num_seats)]


# choose(seat, observation, legal actions) -> the action that seat plays
Chooser = Callable[[int, Observation, list[Action]], Action]


def play_out(
    state: State, choose: Chooser, after_action: Callable[[], None] | None = None
) -> tuple[int, int]:
    """Play `state` to its end; returns (actions, decisions asked of `choose`).

    The one in-process play loop, so the simulator, the benchmark and the bot
    tests play games the same way: a single legal action is played by the
    engine (`apply_forced`, no observation built), only real choices are asked.
    `after_action`, when given, runs after every action, forced ones included.
    """
    actions = decisions = 0
    while not state.is_over:
        legal = state.legal_actions()
        if len(legal) == 1:
            state.apply_forced()
        else:
            seat = state.acting_seat
            state.apply(choose(seat, state.observation(seat), legal))
            decisions += 1
        actions += 1
        if after_action is not None:
            after_action()
    return actions, decisions


def play_game(
    seed: int,
    num_seats: int,
    difficulty: str,
    lineup: Sequence[str],
    check: bool = False,
    ruleset: str = "dd-1",
) -> GameOutcome:
    """One game; bots get their own RNG derived from (seed, seat)."""
    config = GameConfig(seed=seed, num_seats=num_seats, difficulty=difficulty, ruleset=ruleset)
    state = new_game(config)
    bots = [PLAYERS[name](random.Random(seed * 8 + seat)) for seat, name in enumerate(lineup)]

    def conserved() -> None:
        try:
            state.card_places()
        except AssertionError as exc:
            raise CheckFailed(f"seed {seed}: card conservation broken: {exc}") from exc

    actions, decisions = play_out(
        state,
        lambda seat, observation, legal: bots[seat].act(observation, legal),
        conserved if check else None,
    )
    result = state.result
    assert result is not None
    if check:
        if result["reason"] == "turn_limit":
            raise CheckFailed(f"seed {seed}: the {result['turns']}-turn guard fired")
        events, replayed = replay_record(state.record)
        if replayed != result or events != state.log:
            raise CheckFailed(f"seed {seed}: the game record does not replay to the same game")
    return GameOutcome(
        seed=seed,
        lineup=list(lineup),
        reason=result["reason"],
        winner=result["winner"],
        turns=result["turns"],
        ranks=list(result["ranks"]),
        decisions=decisions,
        actions=actions,
    )


def simulate(
    games: int,
    num_seats: int,
    difficulty: str,
    bots: Sequence[str],
    seed: int = 0,
    check: bool = False,
    progress: bool = False,
    ruleset: str = "dd-1",
) -> Summary:
    """Play `games` games (seeds seed..seed+games-1) and summarise them."""
    for name in bots:
        if name not in PLAYERS:
            raise ValueError(f"unknown bot {name!r}; known: {sorted(PLAYERS)}")
    summary = Summary()
    indices: Any = range(games)
    if progress:
        from tqdm import tqdm

        indices = tqdm(indices, total=games, unit="game", file=sys.stderr)
    start = time.perf_counter()
    for i in indices:
        lineup = lineup_for(bots, num_seats, i)
        summary.add(
            play_game(seed + i, num_seats, difficulty, lineup, check=check, ruleset=ruleset)
        )
    summary.seconds = time.perf_counter() - start
    return summary


def format_summary(s: dict[str, Any], args: argparse.Namespace) -> str:
    lines = [
        f"{s['games']} games, {args.ruleset}, {args.players} seats, {args.difficulty}, "
        f"bots {args.bots}, "
        f"seeds {args.seed}..{args.seed + s['games'] - 1}" + (" (checked)" if args.check else ""),
        "end reasons: " + ", ".join(f"{r} {share:.1%}" for r, share in s["end_reasons"].items()),
        f"exploration turns: mean {s['turns_mean']:.1f}, p90 {s['turns_p90']}, "
        f"max {s['turns_max']}",
        "seat rank-1 share: "
        + ", ".join(f"seat {i} {v:.1%}" for i, v in enumerate(s["seat_rank1_share"])),
        "bot rank-1 share: " + ", ".join(f"{b} {v:.1%}" for b, v in s["bot_rank1_share"].items()),
        "bot win share: " + ", ".join(f"{b} {v:.1%}" for b, v in s["bot_win_share"].items()),
        f"speed: {s['games_per_s']:.1f} games/s, {s['decisions_per_s']:.0f} decisions/s "
        f"({s['actions_per_s']:.0f} actions/s incl. forced) in {s['seconds']:.1f} s "
        f"[rules core: {build_info()['build']} build]",
    ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="digdown-simulate", description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    parser.add_argument("--difficulty", default="normal", choices=DIFFICULTIES)
    parser.add_argument("--ruleset", default="dd-1", choices=sorted(RULESETS))
    parser.add_argument(
        "--bots",
        default="heuristic",
        help=f"comma-separated bot names for seats 0..n-1 (known: {', '.join(sorted(PLAYERS))})",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--check",
        action="store_true",
        help="verify card conservation after every action, the turn guard and replays",
    )
    args = parser.parse_args(argv)
    args.bot_list = [b.strip() for b in args.bots.split(",") if b.strip()]
    unknown = [b for b in args.bot_list if b not in PLAYERS]
    if not args.bot_list or unknown:
        parser.error(f"unknown bot(s) {unknown}; known: {sorted(PLAYERS)}")
    if args.games < 1:
        parser.error("--games must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if warning := build_warning():
        print(f"warning: {warning}", file=sys.stderr)
    progress = not args.json and sys.stderr.isatty() and args.games >= 50
    try:
        summary = simulate(
            args.games,
            args.players,
            args.difficulty,
            args.bot_list,
            seed=args.seed,
            check=args.check,
            progress=progress,
            ruleset=args.ruleset,
        )
    except CheckFailed as exc:
        print(f"CHECK FAILED: {exc}", file=sys.stderr)
        return 1
    data = summary.to_dict()
    if args.json:
        data["config"] = {
            "games": args.games,
            "players": args.players,
            "difficulty": args.difficulty,
            "ruleset": args.ruleset,
            "bots": args.bot_list,
            "seed": args.seed,
            "check": args.check,
        }
        data["rules_build"] = build_info()
        print(json.dumps(data, sort_keys=True))
    else:
        print(format_summary(data, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
