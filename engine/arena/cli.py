"""`python -m engine.arena`: many games of your bot against the house bots, one report.

    python -m engine.arena --bot mybot.py --games 200
    python -m engine.arena --bot mybot.py:MyBot --vs heuristic --vs heuristic,random,random \
        --games 400 --duplicate --difficulty hard
    python -m engine.arena --bot 127.0.0.1:50061 --vs heuristic      # a bot already serving
    python -m engine.arena --bot connect --games 100   # your bot connects out to the arena:
        DIGDOWN_TOKEN=arena python -m digdown.connect --connect 127.0.0.1:50070 --bot mybot

`--bot` is a Python file or module with `act(observation, legal_actions)` (or a
`factory(game_id, seat)`; `FILE.py:NAME` picks another function or a class,
one instance per game), or the address of a running gRPC bot (`host:port`,
`unix:/path`), or `connect[:HOST:PORT]` for a bot that only connects out (as it does
to the ladder: the arena serves the Play stream there, engine/arena/bridge.py). Each
`--vs` is one opponent line-up, house bots by name, comma-separated (1 to 3 of them:
2 to 4 seats); the default is `--vs random --vs heuristic`. The author's seat rotates
through every seat; `--duplicate` plays each deal in every rotation.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.arena.bridge import DEFAULT_LISTEN, PlayBridge
from engine.arena.play import ArenaConfig, GameRow, run_arena
from engine.arena.report import format_lineup, summarise
from engine.arena.seats import BotLoadError
from engine.players import PLAYERS
from engine.rules import RULESETS
from engine.rules.ruleset import DIFFICULTIES

# Turns a `--bot` spec into one `engine.arena` can play (e.g. starts a hosted bundle and
# answers its socket); it may register clean-ups on the stack.
BotResolver = Callable[[str, contextlib.ExitStack, ArenaConfig], str]


def parse_args(argv: Sequence[str] | None, prog: str, extra_help: str = "") -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=(__doc__ or "").split("\n\n")[0].strip("`").strip(),
        epilog=extra_help or None,
    )
    parser.add_argument(
        "--bot",
        required=True,
        help="FILE.py[:NAME], MODULE[:NAME], HOST:PORT (a served bot), or connect[:HOST:PORT]"
        f" (your bot connects out to the arena, as to the ladder; default {DEFAULT_LISTEN})",
    )
    parser.add_argument(
        "--connect-wait",
        type=float,
        default=300.0,
        help="--bot connect: seconds to wait for the bot to connect (default 300)",
    )
    parser.add_argument(
        "--vs",
        action="append",
        metavar="BOTS",
        help=f"one opponent line-up, comma-separated house bots ({', '.join(sorted(PLAYERS))})",
    )
    parser.add_argument("--games", type=int, default=100, help="games per line-up (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="first seed (games use seed, seed+1…)")
    parser.add_argument("--difficulty", default="normal", choices=DIFFICULTIES)
    parser.add_argument("--ruleset", default="dd-2", choices=sorted(RULESETS))
    parser.add_argument(
        "--duplicate", action="store_true", help="play every deal in every seat rotation"
    )
    parser.add_argument("--deadline", type=float, default=1.0, help="seconds per decision")
    parser.add_argument("--bank", type=float, default=30.0, help="seconds of bank per game")
    parser.add_argument(
        "--workers", type=int, default=os.cpu_count() or 1, help="processes (default: every core)"
    )
    parser.add_argument("--out", default="arena-replays", help="where the kept replays go")
    parser.add_argument(
        "--keep", type=int, default=5, help="replays kept: the N slowest decisions, N faulted games"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    lineups = []
    for spec in args.vs or ["random", "heuristic"]:
        names = [n.strip() for n in spec.split(",") if n.strip()]
        unknown = [n for n in names if n not in PLAYERS]
        if unknown or not 1 <= len(names) <= 3:
            parser.error(
                f"--vs {spec!r}: 1 to 3 house bots of {sorted(PLAYERS)}"
                + (f"; unknown {unknown}" if unknown else "")
            )
        lineups.append(tuple(names))
    args.lineups = tuple(lineups)
    if args.games < 1:
        parser.error("--games must be at least 1")
    if args.deadline <= 0 or args.bank < 0:
        parser.error("--deadline must be positive and --bank not negative")
    args.workers = max(1, args.workers)
    return args


def connect_bridge(spec: str, stack: contextlib.ExitStack, wait_s: float) -> PlayBridge:
    """``--bot connect[:HOST:PORT]``: serve the Play stream there and wait for the bot."""
    listen = spec.partition(":")[2] or DEFAULT_LISTEN
    try:
        bridge = stack.enter_context(PlayBridge(listen))
    except (OSError, RuntimeError) as exc:
        raise BotLoadError(f"cannot listen on {listen} for your bot: {exc}") from None
    print(
        f"waiting up to {wait_s:g} s for your bot to connect to {bridge.listen} (any token),"
        f" e.g. DIGDOWN_TOKEN=arena python -m digdown.connect --connect {bridge.listen}"
        " --bot mybot",
        file=sys.stderr,
        flush=True,
    )
    if not bridge.wait_connected(wait_s):
        raise BotLoadError(f"no bot connected to {bridge.listen} within {wait_s:g} s")
    print(f"your bot connected to {bridge.listen}", file=sys.stderr, flush=True)
    return bridge


def keep_replays(rows: list[GameRow], out: Path, keep: int) -> dict[str, list[dict[str, Any]]]:
    """Move the kept replays out of the candidates: the slowest decisions, the first faults."""
    with_replay = [r for r in rows if r.replay]
    slowest = sorted(with_replay, key=lambda r: -r.slowest_ms)[:keep]
    faulted = sorted((r for r in with_replay if r.fault_reasons), key=lambda r: r.index)[:keep]
    kept: dict[str, list[dict[str, Any]]] = {"slowest": [], "faulted": []}
    if slowest or faulted:
        out.mkdir(parents=True, exist_ok=True)
    for what, chosen in (("slowest", slowest), ("faulted", faulted)):
        for r in chosen:
            target = out / f"{what}-game{r.index:06d}-seed{r.seed}-seat{r.seat}.json.gz"
            shutil.copyfile(r.replay, target)
            item: dict[str, Any] = {"game": r.index, "seed": r.seed, "seat": r.seat,
                                    "replay": str(target)}  # fmt: skip
            if what == "slowest":
                item.update(think_ms=round(r.slowest_ms, 2), ply=r.slowest_ply)
            else:
                item.update(reasons=r.fault_reasons[:3])
            kept[what].append(item)
    return kept


def _progress(total: int, enabled: bool) -> Any:
    if not enabled:
        return contextlib.nullcontext(None)
    from tqdm import tqdm

    return tqdm(total=total, unit="game", file=sys.stderr, dynamic_ncols=True)


def main(
    argv: Sequence[str] | None = None,
    prog: str = "python -m engine.arena",
    resolve_bot: BotResolver | None = None,
    extra_help: str = "",
) -> int:
    args = parse_args(argv, prog, extra_help)
    config = ArenaConfig(
        bot=args.bot,
        lineups=args.lineups,
        games=args.games,
        seed=args.seed,
        difficulty=args.difficulty,
        ruleset=args.ruleset,
        duplicate=args.duplicate,
        deadline_s=args.deadline,
        bank_s=args.bank,
        workers=args.workers,
        keep=args.keep,
    )
    total = len(config.jobs())
    # A bar only where someone watches it: a terminal (never floods a log or CI).
    show = not args.json and not args.no_progress and sys.stderr.isatty()
    rows: list[GameRow] = []
    with contextlib.ExitStack() as stack:
        candidates = stack.enter_context(tempfile.TemporaryDirectory(prefix="digdown-arena-"))
        config = replace(config, replay_dir=candidates)
        try:
            if config.bot == "connect" or config.bot.startswith("connect:"):
                bridge = connect_bridge(config.bot, stack, args.connect_wait)
                config = replace(config, bot=bridge.bot_address)
            elif resolve_bot is not None:
                config = replace(config, bot=resolve_bot(config.bot, stack, config))
            started = time.perf_counter()
            with _progress(total, show) as bar:
                for row in run_arena(config):
                    rows.append(row)
                    if bar is not None:
                        bar.update(1)
            seconds = time.perf_counter() - started
        except BotLoadError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        kept = keep_replays(rows, Path(args.out), args.keep)
    stats = summarise(config.lineups, rows, config.duplicate)
    if args.json:
        print(
            json.dumps(
                {
                    "bot": args.bot,
                    "games": len(rows),
                    "seconds": seconds,
                    "games_per_s": len(rows) / seconds,
                    "workers": config.workers,
                    "config": {"ruleset": config.ruleset, "difficulty": config.difficulty,
                               "seed": config.seed, "duplicate": config.duplicate,
                               "deadline_s": config.deadline_s, "bank_s": config.bank_s},
                    "lineups": [s.to_dict() for s in stats],
                    "replays": kept,
                },
                sort_keys=True,
            )
        )  # fmt: skip
        return 0
    print(
        f"{args.bot}: {len(rows)} games, {config.ruleset}, {config.difficulty}, seeds from "
        f"{config.seed}{', duplicate deals' if config.duplicate else ''}; {seconds:.1f} s on "
        f"{config.workers} processes ({len(rows) / seconds:.1f} games/s)"
    )
    for s in stats:
        print(format_lineup(s))
    for r in kept["slowest"]:
        at = f"ply {r['ply']} of game {r['game']}"
        print(f"slowest: {r['think_ms']:.1f} ms at {at}: {r['replay']}")
    for r in kept["faulted"]:
        print(f"faulted: game {r['game']} ({'; '.join(r['reasons'])}): {r['replay']}")
    if kept["slowest"] or kept["faulted"]:
        print("open a replay in the viewer (/replays/ on a ladder) or re-check it with "
              "`python -m workers.play verify` in a clone")  # fmt: skip
    return 0
