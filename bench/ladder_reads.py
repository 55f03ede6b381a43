"""Read latency of the ladder at scale: p50/p95 per REST and gRPC endpoint, with query counts.

    DATABASE_URL=postgres://.../ladder .venv/bin/python bench/ladder_reads.py
        [--bots 10000] [--matches 200000] [--rounds 100] [--json]

Not a test. Builds the data set of ``bench/ladder_data.py`` when the database
does not hold it yet, then times every list and detail read, one client at a
time: REST through Django's WSGI handler in this process (middleware, DRF,
serializers and the database, no HTTP server), gRPC through a real
``LadderServer`` on loopback in this process (CallGuard included), with
database connections kept between calls as compose runs the services
(``LADDER_DB_CONN_MAX_AGE=60``; set it to 0 to see what a new connection per
call costs). Each read is
called ``--rounds`` times after a warm-up; the report gives p50, p95 and max in
milliseconds, and the queries one call runs (the same on a small data set: see
``tests/ladder/api/test_query_counts.py``). The target is p95 < 50 ms for every read.
``RequestChallenge`` (a write: it queues a match, picking opponents near the
bot's rating) is timed too; the matches it queues are deleted afterwards.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

# Production-like: no debug (Django would keep every query), throttles out of the way.
os.environ.setdefault("DJANGO_DEBUG", "0")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-" + "k" * 40)
os.environ.setdefault("LADDER_THROTTLE_ANON", "1000000/min")
os.environ.setdefault("LADDER_THROTTLE_USER", "1000000/min")
os.environ.setdefault("LADDER_DB_CONN_MAX_AGE", "60")  # as compose runs the services
sys.path.insert(0, str(Path(__file__).resolve().parent))

import grpc
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from ladder_data import DataSet, ensure

from digdown.v1 import ladder_pb2 as pb
from digdown.v1 import ladder_pb2_grpc
from ladder.accounts.models import User
from ladder.accounts.services import token_create
from ladder.grpc.server import LadderServer
from ladder.matches.models import Match
from tests.support.queries import QueryCounter

DEEP_LEADERBOARD_PAGE = 150  # positions 7451-7500 at 50 a page
TARGET_P95_MS = 50.0


def cursor_before(match_id: int) -> str:
    """A keyset cursor as DRF's CursorPagination encodes it: the page after ``match_id``."""
    return base64.b64encode(urlencode({"p": str(match_id)}).encode()).decode()


def board_cursor(position: int) -> str:
    """The keyset cursor of the page after ``position`` (as a ``next`` link carries it)."""
    from ladder.common import keyset
    from ladder.ratings.selectors import leaderboard_list

    score, pk = leaderboard_list().values_list("score", "pk")[position - 1]
    return keyset.Cursor(True, score, pk, position).encode()


def bot_cursor(bot_id: int) -> str:
    """The keyset cursor of a page halfway down ``bot_id``'s matches (newest first)."""
    return cursor_before(_middle_match(bot_id))


def _middle_match(bot_id: int) -> int:
    from ladder.matches.models import MatchSeat

    ids = MatchSeat.objects.filter(bot_id=bot_id).order_by("-match_id")
    n = ids.count()
    return ids.values_list("match_id", flat=True)[n // 2] if n else 1


def season_page(number: int) -> int:
    """The last full page (50 a page) of a finished season's table."""
    from ladder.ratings.models import SeasonStanding

    return max(1, SeasonStanding.objects.filter(season__number=number).count() // 50)


def rest_reads(data: DataSet) -> dict[str, str]:
    bot, cup, match = data.busiest_bot, data.tournament, data.largest_match
    deep = cursor_before(data.matches // 20)
    season = data.finished_season
    return {
        "leaderboard": "/api/v1/leaderboard/",
        f"leaderboard page {DEEP_LEADERBOARD_PAGE}": (
            f"/api/v1/leaderboard/?page={DEEP_LEADERBOARD_PAGE}"
        ),
        "leaderboard cursor after 7450": (
            f"/api/v1/leaderboard/?cursor={board_cursor((DEEP_LEADERBOARD_PAGE - 1) * 50)}"
        ),
        "leaderboard search": "/api/v1/leaderboard/?search=bot-09",
        "leaderboard provisional": "/api/v1/leaderboard/?provisional=true",
        "bots": "/api/v1/bots/",
        "bots page 150": "/api/v1/bots/?page=150",
        "bot detail (busiest)": f"/api/v1/bots/{bot}/",
        "bot versions": f"/api/v1/bots/{bot}/versions/",
        "rating history (busiest, 200)": f"/api/v1/bots/{bot}/rating-history/",
        "matches": "/api/v1/matches/",
        "matches deep (keyset)": f"/api/v1/matches/?cursor={deep}",
        "matches of the busiest bot": f"/api/v1/matches/?bot={bot}",
        "matches of the busiest, deep": (
            f"/api/v1/matches/?bot={bot}&cursor={cursor_before(data.matches // 2)}"
        ),
        "matches of a busy bot (20th), deep": (
            f"/api/v1/matches/?bot={data.busy_bot}&cursor={bot_cursor(data.busy_bot)}"
        ),
        "matches of the busiest, deep, finished": (
            f"/api/v1/matches/?bot={bot}&status=finished&cursor={bot_cursor(bot)}"
        ),
        "season table (finished)": f"/api/v1/seasons/{season}/standings/",
        "season table (finished), last page": (
            f"/api/v1/seasons/{season}/standings/?page={season_page(season)}"
        ),
        "season table (live: the leaderboard)": "/api/v1/leaderboard/?page=100",
        "matches finished": "/api/v1/matches/?status=finished",
        "matches queued": "/api/v1/matches/?status=queued",
        "matches of a tournament": f"/api/v1/matches/?tournament={cup}",
        "match detail (4 seats)": f"/api/v1/matches/{match}/",
        "tournaments": "/api/v1/tournaments/",
        "tournament participants": f"/api/v1/tournaments/{cup}/participants/",
        "tournament standings (2,000 bots)": f"/api/v1/tournaments/{cup}/standings/",
        "tournament standings, page 80": f"/api/v1/tournaments/{cup}/standings/?page=80",
        "ladders": "/api/v1/ladders/",
        "tokens (authenticated)": "/api/v1/tokens/",
        "my bots (authenticated)": "/api/v1/bots/?mine=true",
    }


def time_calls(call: Callable[[], Any], rounds: int) -> tuple[list[float], float]:
    """Wall milliseconds of each call, and this process's CPU milliseconds per call.

    The CPU figure leaves out the database server and other processes, so on a
    shared machine it says what our own code costs when the wall clock cannot.
    """
    for _ in range(3):
        call()
    out = []
    cpu = time.process_time()
    for _ in range(rounds):
        started = time.perf_counter()
        call()
        out.append((time.perf_counter() - started) * 1000)
    return out, (time.process_time() - cpu) * 1000 / rounds


def summary(timed: tuple[list[float], float], queries: int) -> dict[str, float]:
    samples, cpu = timed
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return {
        "p50_ms": round(statistics.median(samples), 2),
        "p95_ms": round(cuts[94], 2),
        "p99_ms": round(cuts[98], 2),
        "max_ms": round(max(samples), 2),
        "cpu_ms": round(cpu, 2),
        "queries": queries,
    }


def bench_rest(data: DataSet, secret: str, rounds: int) -> dict[str, dict[str, float]]:
    anonymous, authed = Client(), Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    out = {}
    for name, url in rest_reads(data).items():
        client = authed if "authenticated" in name else anonymous

        def call(client: Client = client, url: str = url) -> None:
            r = client.get(url)
            assert r.status_code == 200, (url, r.status_code, r.content[:200])

        with CaptureQueriesContext(connection) as ctx:
            call()
        queries = len(ctx.captured_queries)  # now: the next request empties the log
        out[name] = summary(time_calls(call, rounds), queries)
    return out


def bench_grpc(
    data: DataSet, secret: str, rounds: int, *, writes: bool = True
) -> dict[str, dict[str, float]]:
    """Every gRPC read (and, with ``writes``, RequestChallenge) through a real server."""
    counter = QueryCounter()
    server = LadderServer("127.0.0.1:0", max_workers=4, rate="0", outer_interceptors=[counter])
    server.start()
    md = [("authorization", f"Bearer {secret}")]
    busiest = f"bot-{data.busiest_bot:05d}"
    busy = f"bot-{data.busy_bot:05d}"
    busy_deep = str(_middle_match(data.busy_bot))
    first = Match.objects.order_by("-id").values_list("pk", flat=True)[0]
    queued_before = first
    deep_board = board_cursor(7450)
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = ladder_pb2_grpc.LadderStub(channel)
            reads: dict[str, tuple[str, Callable[[], Any]]] = {
                "Leaderboard": (
                    "Leaderboard",
                    lambda: stub.Leaderboard(pb.LeaderboardRequest(), timeout=10),
                ),
                "Leaderboard deep (offset 7450)": (
                    "Leaderboard",
                    lambda: stub.Leaderboard(pb.LeaderboardRequest(page_token="7450"), timeout=10),
                ),
                "Leaderboard deep (keyset after 7450)": (
                    "Leaderboard",
                    lambda: stub.Leaderboard(
                        pb.LeaderboardRequest(page_token=deep_board), timeout=10
                    ),
                ),
                "ListMatches (busiest)": (
                    "ListMatches",
                    lambda: stub.ListMatches(pb.ListMatchesRequest(bot=busiest), timeout=10),
                ),
                "ListMatches (busiest, deep)": (
                    "ListMatches",
                    lambda: stub.ListMatches(
                        pb.ListMatchesRequest(bot=busiest, page_token=str(data.matches // 2)),
                        timeout=10,
                    ),
                ),
                "ListMatches (busy 20th, deep)": (
                    "ListMatches",
                    lambda: stub.ListMatches(
                        pb.ListMatchesRequest(bot=busy, page_token=busy_deep), timeout=10
                    ),
                ),
                "GetTournament (2,000 bots)": (
                    "GetTournament",
                    lambda: stub.GetTournament(
                        pb.GetTournamentRequest(tournament_id=data.tournament), timeout=10
                    ),
                ),
                "GetTournament, page 41 (offset 2000)": (
                    "GetTournament",
                    lambda: stub.GetTournament(
                        pb.GetTournamentRequest(tournament_id=data.tournament, page_token="2000"),
                        timeout=10,
                    ),
                ),
                "GetMatch (4 seats)": (
                    "GetMatch",
                    lambda: stub.GetMatch(
                        pb.GetMatchRequest(match_id=data.largest_match), timeout=10
                    ),
                ),
                "ListMyBots (busiest's owner)": (
                    "ListMyBots",
                    lambda: stub.ListMyBots(pb.ListMyBotsRequest(), metadata=md, timeout=10),
                ),
                "ListLadders": (
                    "ListLadders",
                    lambda: stub.ListLadders(pb.ListLaddersRequest(), timeout=10),
                ),
                "RequestChallenge (write; opponents picked)": (
                    "RequestChallenge",
                    lambda: stub.RequestChallenge(
                        pb.RequestChallengeRequest(bot=busiest, num_seats=4),
                        metadata=md,
                        timeout=10,
                    ),
                ),
            }
            if not writes:
                del reads["RequestChallenge (write; opponents picked)"]
            out = {}
            # The write is timed for what it costs, not for its quota's refusals: the
            # owner's open-challenge and daily limits would refuse it after ten calls.
            with override_settings(
                LADDER_QUOTA_OPEN_CHALLENGES=0, LADDER_QUOTA_CHALLENGES_PER_DAY=0
            ):
                for name, (method, call) in reads.items():
                    out[name] = summary(time_calls(call, rounds), counter.last[method])
    finally:
        server.stop(1.0)
        Match.objects.filter(pk__gt=queued_before).delete()
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=10_000)
    parser.add_argument("--matches", type=int, default=200_000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    data = ensure(bots=args.bots, matches=args.matches)
    owner = User.objects.get(username=data.busiest_owner)
    secret = token_create(user=owner, name="bench").secret
    results = {
        "rest": bench_rest(data, secret, args.rounds),
        "grpc": bench_grpc(data, secret, args.rounds),
    }
    report = {
        "data": data.__dict__,
        "rounds": args.rounds,
        "machine": f"{platform.machine()} {os.cpu_count()} cpus, {connection.vendor}",
        "results": results,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(
        f"{data.bots} bots, {data.matches} finished matches; {args.rounds} calls each, one client;"
        f" {report['machine']}"
    )
    print(f"{'read':<48} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'cpu ms':>8} {'queries':>8}")
    worst = 0.0
    for api, rows in results.items():
        for name, r in rows.items():
            worst = max(worst, r["p95_ms"]) if "write" not in name else worst
            print(
                f"{api + ' ' + name:<48} {r['p50_ms']:>8.2f} {r['p95_ms']:>8.2f}"
                f" {r['max_ms']:>8.2f} {r['cpu_ms']:>8.2f} {r['queries']:>8}"
            )
    verdict = "met" if worst < TARGET_P95_MS else "NOT met"
    print(f"worst p95 of the reads: {worst:.2f} ms (target {TARGET_P95_MS:.0f} ms: {verdict})")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus")


if __name__ == "__main__":
    main()
