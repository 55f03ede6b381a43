"""Page latency of the site at ladder scale: p50/p95 per page on PostgreSQL.

    DATABASE_URL=postgres://.../NAME .venv/bin/python bench/web_bench.py \\
        [--bots 10000] [--matches 200000] [--requests 40] [--force] [--json]

Not a test. The data set is the project's one builder's, ``bench/ladder_data.py``
(``ensure``: built with COPY only when the database does not hold that size
yet; ``--force`` rebuilds). With the static files collected, every page is
requested in-process through Django's WSGI handler (the test client) with
``DJANGO_DEBUG=0``: middleware, session, templates, selectors and the database,
no network. Each request varies the bot, match or leaderboard page, signed in
as the owner of the busiest bot (the dashboard and manage pages are theirs).
Database connections are kept between requests as compose runs the site
(``LADDER_DB_CONN_MAX_AGE=60``). It prints p50/p95/max per page, the queries
one request ran, the page size, and the REST API's leaderboard and bot detail
measured in the same run as the reference (figures, never asserted anywhere).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--database",
        default=os.environ.get("DATABASE_URL", ""),
        help="PostgreSQL URL of a database for the benchmark (it is emptied and filled)",
    )
    p.add_argument("--bots", type=int, default=10_000)
    p.add_argument("--matches", type=int, default=200_000)
    p.add_argument("--requests", type=int, default=40, help="timed requests per page")
    p.add_argument("--force", action="store_true", help="rebuild the data set")
    p.add_argument("--seed", type=int, default=1, help="which bots and pages are asked")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    return p.parse_args(argv)


def setup_django(database: str, static_root: str) -> None:
    """Production-like settings, then Django (``ladder_data`` sets it up on import)."""
    if not database.startswith("postgres"):
        sys.exit("--database (or DATABASE_URL) must be a PostgreSQL URL")
    os.environ.update(
        DATABASE_URL=database,
        DJANGO_DEBUG="0",  # Django keeps no query log; templates cached
        DJANGO_SECRET_KEY="bench-only-" + "b" * 40,
        DJANGO_SETTINGS_MODULE="ladder.settings",
        LADDER_STATIC_ROOT=static_root,
        LADDER_THROTTLE_ANON="100000000/min",
        LADDER_THROTTLE_USER="100000000/min",
    )
    os.environ.setdefault("LADDER_DB_CONN_MAX_AGE", "60")  # as compose runs the site
    sys.path.insert(0, str(BENCH))


def pages(data: Any, rng: random.Random) -> dict[str, Callable[[], str]]:
    """Each page and how to pick its URL for one request."""
    from ladder.bots.models import Bot
    from ladder.ladders import ladder_default
    from ladder.matches.models import Match

    bot_ids = list(Bot.objects.values_list("pk", flat=True))
    match_ids = list(Match.objects.filter(status="finished").values_list("pk", flat=True)[::50])
    owners = max(1, data.bots // 8)  # as ladder_data names them
    last_page = len(bot_ids) // 50
    ladder = ladder_default().key
    # Keyset links into the second half of the board, as its "Next" links make them.
    from ladder.common import keyset
    from ladder.matches.bot_selectors import bot_match_count
    from ladder.ratings.selectors import leaderboard_search

    board = list(leaderboard_search(include_inactive=True).values_list("score", "pk"))
    # The busiest bot's and the tournament's match lists, 20 lines a page (the pages'
    # MATCHES_PER_PAGE): a deep page by number is sought on the list's index.
    busiest_pages = max(1, -(-bot_match_count(bot_id=data.busiest_bot) // 20))
    busy_pages = max(1, -(-bot_match_count(bot_id=data.busy_bot) // 20))
    # A finished season's final table, 100 lines a page (the leaderboard's ?season=).
    from ladder.ratings.models import SeasonStanding

    season = data.finished_season
    season_pages = max(1, -(-SeasonStanding.objects.filter(season__number=season).count() // 100))
    cup_pages = max(1, -(-Match.objects.filter(tournament_id=data.tournament).count() // 20))
    half = len(board) // 2
    cursors = [
        keyset.Cursor(True, board[i][0], board[i][1], i + 1).encode()
        for i in range(half, len(board) - 1, 50)
    ] or [""]
    return {
        "leaderboard": lambda: "/",
        "leaderboard deep page (offset)": lambda: (
            f"/?page={rng.randint(last_page // 2, last_page)}"
        ),
        "leaderboard deep page (cursor)": lambda: f"/?cursor={rng.choice(cursors)}",
        "leaderboard search": lambda: f"/?q=bot-0{rng.randint(0, 99):02d}",
        "leaderboard owner search": lambda: f"/?q=owner-{rng.randint(1, owners):05d}",
        "leaderboard by games": lambda: "/?sort=-games",
        "leaderboard hosted": lambda: f"/?kind=hosted&page={rng.randint(1, 10)}",
        "leaderboard ?ladder=": lambda: f"/?ladder={ladder}&page={rng.randint(1, 20)}",
        "bot": lambda: f"/bots/{rng.choice(bot_ids)}/",
        "bot (busiest)": lambda: f"/bots/{data.busiest_bot}/",
        "bot (busiest), deep match page": lambda: (
            f"/bots/{data.busiest_bot}/?page={rng.randint(busiest_pages // 2, busiest_pages)}"
        ),
        "bot (busy 20th), deep match page": lambda: (
            f"/bots/{data.busy_bot}/?page={rng.randint(busy_pages // 2, busy_pages)}"
        ),
        "season table (finished)": lambda: f"/?season={season}",
        "season table (finished), deep page": lambda: (
            f"/?season={season}&page={rng.randint(season_pages // 2, season_pages)}"
        ),
        "match": lambda: f"/matches/{rng.choice(match_ids)}/",
        "replay page": lambda: f"/replays/matches/{rng.choice(match_ids)}/",
        "tournaments": lambda: "/tournaments/",
        "tournament (2,000 bots)": lambda: f"/tournaments/{data.tournament}/",
        "tournament (2,000 bots), deep match page": lambda: (
            f"/tournaments/{data.tournament}/?page={rng.randint(cup_pages // 2, cup_pages)}"
        ),
        "now": lambda: "/now/",
        "now ?ladder=": lambda: f"/now/?ladder={ladder}",
        "dashboard": lambda: "/me/",
        "manage (busiest bot)": lambda: f"/me/bots/{data.busiest_bot}/",
        "API leaderboard (reference)": lambda: "/api/v1/leaderboard/",
        "API bot detail (reference)": lambda: f"/api/v1/bots/{rng.choice(bot_ids)}/",
    }


def _counted(executed: list[str], execute: Any, sql: str, *rest: Any) -> Any:
    executed.append(sql)
    return execute(sql, *rest)


def measure(data: Any, requests: int, seed: int) -> dict[str, dict[str, Any]]:
    from django.db import connection
    from django.test import Client

    from ladder.accounts.models import User

    rng = random.Random(seed)
    client = Client()
    client.force_login(User.objects.get(username=data.busiest_owner))
    figures: dict[str, dict[str, Any]] = {}
    for name, url_for in pages(data, rng).items():
        for _ in range(3):  # warm caches and the connection
            client.get(url_for())
        executed: list[str] = []
        with connection.execute_wrapper(partial(_counted, executed)):
            response = client.get(url_for())
        assert response.status_code == 200, (name, response.status_code)
        times = []
        for _ in range(requests):
            url = url_for()
            started = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, (url, response.status_code)
        times.sort()
        figures[name] = {
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(times[max(0, int(len(times) * 0.95) - 1)], 1),
            "p99_ms": round(times[max(0, int(len(times) * 0.99) - 1)], 1),
            "max_ms": round(times[-1], 1),
            "queries": len(executed),
            "kb": round(len(response.content) / 1024, 1),
        }
    return figures


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="web-bench-static-") as static_root:
        setup_django(args.database, static_root)
        from django.core.management import call_command
        from ladder_data import ensure  # the project's one builder (sets Django up)

        started = time.perf_counter()
        data = ensure(bots=args.bots, matches=args.matches, force=args.force)
        ready_s = round(time.perf_counter() - started, 1)
        call_command("collectstatic", interactive=False, verbosity=0)
        figures = measure(data, args.requests, args.seed)
    machine = {"cpus": os.cpu_count(), "load": [round(x, 2) for x in os.getloadavg()]}
    if args.json:
        print(json.dumps({"data": vars(data), "machine": machine, "pages": figures}, indent=2))
        return 0
    print(f"\ndata: {vars(data)} (ready in {ready_s} s)")
    print(f"machine: {platform.node()}, {machine['cpus']} CPUs, load {machine['load']} at the end")
    print(f"{args.requests} requests per page, in-process, DJANGO_DEBUG=0, PostgreSQL\n")
    reference = figures["API leaderboard (reference)"]["p50_ms"]
    print(f"{'page':<30}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'queries':>9}{'KiB':>8}"
          f"{'p50/API':>9}")  # fmt: skip
    for name, f in figures.items():
        print(f"{name:<30}{f['p50_ms']:>9}{f['p95_ms']:>9}{f['max_ms']:>9}{f['queries']:>9}"
              f"{f['kb']:>8}{f['p50_ms'] / reference:>9.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
