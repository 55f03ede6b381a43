"""Page latency of the site at ladder scale: p50/p95 per page on PostgreSQL.

    .venv/bin/python bench/web_bench.py --database postgres://postgres@127.0.0.1:5432/NAME \\
        [--bots 10000] [--matches 200000] [--requests 40] [--rebuild] [--json]

Fills the database once with ``bench/web_dataset.py`` (reused on the next run
when its size matches; ``--rebuild`` flushes and builds again), collects the
static files, then requests every page in-process through Django's test client
with ``DJANGO_DEBUG=0`` (templates, selectors, database; no network), varying
the bot, match and leaderboard page each time. It prints p50/p95/max per page,
the queries each page ran, and the REST API's leaderboard and bot detail as a
reference measured in the same run (figures, never asserted anywhere).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--database",
        default=os.environ.get("DATABASE_URL", ""),
        help="PostgreSQL URL of a database for the benchmark (it is filled)",
    )
    p.add_argument("--bots", type=int, default=10_000)
    p.add_argument("--matches", type=int, default=200_000)
    p.add_argument("--requests", type=int, default=40, help="timed requests per page")
    p.add_argument("--rebuild", action="store_true", help="flush and build the data again")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    return p.parse_args(argv)


def setup_django(database: str, static_root: str) -> None:
    if not database.startswith("postgres"):
        sys.exit("--database (or DATABASE_URL) must be a PostgreSQL URL")
    os.environ.update(
        DATABASE_URL=database,
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY="bench-only-" + "b" * 40,
        DJANGO_SETTINGS_MODULE="ladder.settings",
        LADDER_STATIC_ROOT=static_root,
        LADDER_THROTTLE_ANON="100000000/min",
        LADDER_THROTTLE_USER="100000000/min",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def ensure_data(bots: int, matches: int, rebuild: bool, seed: int) -> dict[str, Any]:
    from django.core.management import call_command
    from django.db import connection

    from bench.web_dataset import build
    from ladder.bots.models import Bot
    from ladder.matches.models import MatchResult

    call_command("migrate", verbosity=0)
    have = (Bot.objects.count(), MatchResult.objects.count())
    if rebuild or have[0] != bots or not 0.9 * matches <= have[1] <= matches:
        print(f"building {bots} bots and {matches} matches (found {have[0]}, {have[1]})")
        call_command("flush", interactive=False, verbosity=0)
        started = time.perf_counter()
        dataset = build(bots=bots, matches=matches, seed=seed)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
        built = {"build_s": round(time.perf_counter() - started, 1), **vars(dataset)}
    else:
        built = {"build_s": None, "bots": have[0], "matches": have[1]}
    return built


def pages(rng: random.Random) -> dict[str, Callable[[], str]]:
    """Each page and how to pick its URL for one request."""
    from ladder.bots.models import Bot
    from ladder.matches.models import Match, Tournament

    bot_ids = list(Bot.objects.values_list("pk", flat=True))
    busiest = list(Bot.objects.order_by("-games").values_list("pk", flat=True)[:20])
    match_ids = list(Match.objects.filter(status="finished").values_list("pk", flat=True)[::50])
    tournaments = list(Tournament.objects.values_list("pk", flat=True))
    last_page = len(bot_ids) // 50
    return {
        "leaderboard": lambda: "/",
        "leaderboard deep page": lambda: f"/?page={rng.randint(last_page // 2, last_page)}",
        "leaderboard search": lambda: f"/?q=bot0{rng.randint(0, 99):02d}",
        "leaderboard owner search": lambda: f"/?q=owner{rng.randint(0, 999):05d}",
        "leaderboard by games": lambda: "/?sort=-games",
        "leaderboard hosted": lambda: f"/?kind=hosted&page={rng.randint(1, 20)}",
        "bot": lambda: f"/bots/{rng.choice(bot_ids)}/",
        "bot (busiest)": lambda: f"/bots/{rng.choice(busiest)}/",
        "match": lambda: f"/matches/{rng.choice(match_ids)}/",
        "tournaments": lambda: "/tournaments/",
        "tournament": lambda: f"/tournaments/{rng.choice(tournaments)}/",
        "now": lambda: "/now/",
        "dashboard": lambda: "/me/",
        "API leaderboard (reference)": lambda: "/api/v1/leaderboard/",
        "API bot detail (reference)": lambda: f"/api/v1/bots/{rng.choice(bot_ids)}/",
    }


def _counted(executed: list[str], execute: Any, sql: str, *rest: Any) -> Any:
    executed.append(sql)
    return execute(sql, *rest)


def measure(requests: int, seed: int) -> dict[str, dict[str, Any]]:
    from django.db import connection
    from django.test import Client

    from ladder.accounts.models import User

    rng = random.Random(seed)
    client = Client()
    client.force_login(User.objects.order_by("pk").first())
    figures: dict[str, dict[str, Any]] = {}
    for name, url_for in pages(rng).items():
        for _ in range(3):  # warm caches and connections
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

        data = ensure_data(args.bots, args.matches, args.rebuild, args.seed)
        call_command("collectstatic", interactive=False, verbosity=0)
        figures = measure(args.requests, args.seed)
    if args.json:
        print(json.dumps({"data": data, "pages": figures}, indent=2))
        return 0
    print(f"\ndata: {data}")
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
