"""What a deep page of a bot's matches and of a season's table costs in the database:
execution time and pages touched, old query shape against new, at any ladder size.

    DATABASE_URL=postgres://.../ladder .venv/bin/python bench/table_reads.py
        [--bots 10000] [--matches 200000] [--rounds 30] [--json]

Not a test. On the data set of ``bench/ladder_data.py`` (built when the database
does not hold that size; ``finished_season`` adds a finished season's table) each
statement it runs is run under ``EXPLAIN (ANALYZE, BUFFERS)`` ``--rounds`` times:
the median execution time the server reports, the shared buffers (8 KiB pages) the
plans touched and the rows their scans returned (what they walked), two counts the
machine's load does not move. Run it at two sizes (say 50,000
and 200,000 matches) to see which reads grow with the ladder's history:

- a bot's matches from the middle of its list, 51 rows (a page and the next one's
  first): the old shape, "matches with a seat of this bot, id below the cursor" (the
  planner walked the match table backwards and probed each match), against the new
  one, a range of the bot's seats' (bot, match) index (``bot_selectors``);
- a finished season's last page of 100: an OFFSET over the table joined to bots and
  owners (the old page) against ``SeasonTable`` (a range of the (season, position)
  index, then the page's bots and owners by key), and the table's count that both
  pages need (bounded by the bots, not the matches).

A bot's page of matches, old and new, also reads the open matches' index once (the
reveal rule of a list's seeds: ``selectors._revealed``): about 1,100 of the rows
scanned at the data set's 1,100 queued and running matches, the same in both.

The plan's top node is printed with ``--plans``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from django.db import connection
from ladder_data import ensure

from ladder.ladders import ladder_default
from ladder.matches.bot_selectors import bot_match_seats
from ladder.matches.models import MatchSeat
from ladder.matches.selectors import match_list
from ladder.ratings.models import Season, SeasonStanding
from ladder.ratings.selectors import season_table

PAGE = 50


def _captured(read: Callable[[], Any]) -> list[tuple[str, Any]]:
    """The SQL statements (and parameters) one call of ``read`` runs."""
    statements: list[tuple[str, Any]] = []

    def keep(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        statements.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(keep):
        read()
    return statements


SCANS = ("Seq Scan", "Index Scan", "Index Only Scan", "Bitmap Heap Scan")


def _scanned(node: dict[str, Any]) -> int:
    """Rows the plan's scans returned (times their loops): what it walked."""
    own = node.get("Actual Rows", 0) * node.get("Actual Loops", 1)
    here = int(own) if node["Node Type"] in SCANS else 0
    return here + sum(_scanned(child) for child in node.get("Plans", []))


def _explain(statements: list[tuple[str, Any]]) -> tuple[float, int, int, str]:
    """Execution ms, shared buffers touched and rows scanned, summed over the
    statements, and their plans (node, index, actual rows)."""
    total_ms, total_buffers, scanned, plans = 0.0, 0, 0, []
    for sql, params in statements:
        with connection.cursor() as cur:
            cur.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
            doc = cur.fetchone()[0]
        doc = json.loads(doc) if isinstance(doc, str) else doc
        plan = doc[0]["Plan"]
        total_ms += float(doc[0]["Execution Time"])
        total_buffers += plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)
        scanned += _scanned(plan)

        def walk(node: dict[str, Any], depth: int = 0) -> list[str]:
            index = f" using {node['Index Name']}" if "Index Name" in node else ""
            line = f"{'  ' * depth}{node['Node Type']}{index} rows={node.get('Actual Rows')}"
            return [line] + [x for c in node.get("Plans", []) for x in walk(c, depth + 1)]

        plans.append("\n".join(walk(plan)))
    return total_ms, int(total_buffers), scanned, "\n--\n".join(plans)


def _middle(bot_id: int) -> int:
    ids = MatchSeat.objects.filter(bot_id=bot_id).order_by("-match_id")
    n = ids.count()
    return ids.values_list("match_id", flat=True)[n // 2] if n else 1


def reads(data: Any) -> dict[str, Callable[[], Any]]:
    """Each read as the code does it: the old shapes as they were, the new as the
    selectors do them now (every statement each runs is explained). A bot's page is
    its matches' rows: their seats are read the same way by both (``with_seat_rows``)."""
    from ladder.ratings.models import BotRating

    by_games = list(BotRating.objects.order_by("-games", "bot_id").values_list("bot_id", "games"))
    bots = {"busiest": by_games[0], "20th": by_games[min(19, len(by_games) - 1)]}
    bots["a 100-game bot"] = min(by_games, key=lambda bg: abs(bg[1] - 100))
    out: dict[str, Callable[[], Any]] = {}
    for name, (bot, _games) in bots.items():
        before = _middle(bot)
        old = match_list(bot_id=bot, seats=False).filter(pk__lt=before)
        out[f"bot matches, deep ({name}): old, matches filtered by the bot"] = partial(
            lambda qs: list(qs[: PAGE + 1]), old
        )
        seats = bot_match_seats(bot_id=bot).filter(match_id__lt=before)
        out[f"bot matches, deep ({name}): new, a range of its seats"] = partial(
            lambda qs: list(qs[: PAGE + 1]), seats
        )
    season = Season.objects.get(ladder=ladder_default().key, number=data.finished_season)
    n = SeasonStanding.objects.filter(season=season).count()
    last = max(0, (n - 1) // 100 * 100)
    joined = SeasonStanding.objects.filter(season=season).select_related("bot__owner")
    out["season table, last page: old, OFFSET joined"] = partial(
        lambda qs: list(qs[last : last + 100]), joined.order_by("official_position")
    )
    table = season_table(season=season)
    out["season table: its count (the paginator's, once a page)"] = lambda: season_table(
        season=season
    ).count()
    table.count()  # counted by the line above: the page's own statements below
    out["season table, last page: new (SeasonTable)"] = lambda: table[last : last + 100]
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=10_000)
    parser.add_argument("--matches", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--plans", action="store_true")
    args = parser.parse_args(argv)
    data = ensure(bots=args.bots, matches=args.matches)
    results: dict[str, dict[str, Any]] = {}
    for name, read in reads(data).items():
        statements = _captured(read)
        runs = [_explain(statements) for _ in range(args.rounds)]
        results[name] = {
            "exec_ms_p50": round(statistics.median(r[0] for r in runs), 3),
            "buffers": runs[-1][1],
            "rows_scanned": runs[-1][2],
        }
        if args.plans:
            results[name]["plan"] = runs[-1][3]
    report = {"data": vars(data), "load": os.getloadavg()[0], "results": results}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{data.bots} bots, {data.matches} matches; {args.rounds} runs each, server-side")
    print(f"{'read':<66} {'exec ms p50':>12} {'buffers':>8} {'scanned':>8}")
    for name, r in results.items():
        print(f"{name:<66} {r['exec_ms_p50']:>12.3f} {r['buffers']:>8} {r['rows_scanned']:>8}")
        if args.plans:
            print("    " + r["plan"].replace("\n", "\n    "))
    print(f"load average: {report['load']:.1f} on {os.cpu_count()} cpus")


if __name__ == "__main__":
    main()
