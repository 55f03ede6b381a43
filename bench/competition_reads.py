"""Read latency of the competition pages at scale: p50/p95 per read, with query counts.

    DATABASE_URL=postgres://.../ladder .venv/bin/python bench/competition_reads.py
        [--bots 10000] [--matches 200000] [--entrants 2000] [--rounds 100] [--json]

Not a test. On the data set of ``bench/ladder_data.py`` (built when the database
does not hold it yet) it adds one finished competition of ``--entrants`` entries
with a 16-bot knockout final (its view and result as the final's steps leave
them), then times the competition list, its detail, its entrants (first and a
deep page) over REST, ``GetCompetition`` over gRPC, and the competition's web
page. A competition page reads its row (phases, the final's view and result kept
there by the final's steps) and a page of entries through an index, so its cost
does not grow with the ladder's matches. Target: p95 < 50 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The web page is rendered with DJANGO_DEBUG=0: its static files need a manifest.
os.environ.setdefault("LADDER_STATIC_ROOT", tempfile.mkdtemp(prefix="competition-reads-static-"))

from ladder_reads import TARGET_P95_MS, summary, time_calls  # noqa: I001 (sets Django up)

import grpc
from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client
from django.utils import timezone
from ladder_data import ensure

from digdown.v1 import ladder_pb2 as pb
from digdown.v1 import ladder_pb2_grpc
from ladder.bots.models import Bot
from ladder.competitions.final import FinalConfig, Format, final_step
from ladder.competitions.models import Competition, CompetitionEntry
from ladder.competitions.settle import DealRecord
from ladder.grpc.server import LadderServer

NAME = "bench-cup"


def build(entrants: int) -> Competition:
    """The finished competition of the benchmark (made once, kept)."""
    found = Competition.objects.filter(name=NAME).first()
    if found is not None and found.entries.count() == entrants:
        return found
    Competition.objects.filter(name=NAME).delete()
    bots = list(Bot.objects.order_by("pk").values_list("pk", "owner_id")[:entrants])
    now = timezone.now()
    seeds = [b for b, _ in bots[:16]]
    config = FinalConfig(format=Format.SINGLE_ELIMINATION, min_deals=2, matchup_max_deals=8)
    rng = random.Random(0)
    records: list[DealRecord] = []
    while (step := final_step(config, seeds, records)).result is None:
        for r in step.play:
            for _ in range(r.deals):
                a, b = r.table
                win = 1.0 if rng.random() < 0.5 + (seeds.index(b) - seeds.index(a)) / 40 else 0.0
                records.append(DealRecord(r.key, r.table, {(a, b): win, (b, a): 1 - win}))
    result = step.result
    with transaction.atomic():
        c = Competition.objects.create(
            name=NAME,
            rules="The benchmark's competition.",
            entry_opens_at=now - timedelta(days=30),
            freeze_at=now - timedelta(days=2),
            final_starts_at=now - timedelta(days=1),
            finished_at=now,
            final_size=16,
            format=Format.SINGLE_ELIMINATION,
            phase=Competition.Phase.FINISHED,
            final_view=step.view,
            result={
                "places": [p.__dict__ for p in result.places],
                "coin_tosses": result.coin_tosses,
                "settled_places": result.settled_places,
                "pairwise": result.pairwise,
                "games": result.games,
                "capped": result.capped,
            },
            games=result.games,
        )
        places = {p.bot: p for p in result.places}
        CompetitionEntry.objects.bulk_create(
            [
                CompetitionEntry(
                    competition=c,
                    bot_id=bot,
                    owner_id=owner,
                    seed=i + 1,
                    finalist=i < 16,
                    place=places[bot].place if bot in places else None,
                    place_low=places[bot].low if bot in places else None,
                    place_high=places[bot].high if bot in places else None,
                )
                for i, (bot, owner) in enumerate(bots)
            ],
            batch_size=1000,
        )
    return c


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=10_000)
    parser.add_argument("--matches", type=int, default=200_000)
    parser.add_argument("--entrants", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    ensure(bots=args.bots, matches=args.matches)
    call_command("collectstatic", interactive=False, verbosity=0)
    c = build(args.entrants)
    client = Client()
    reads = {
        "competitions (REST)": "/api/v1/competitions/",
        "competition detail (REST)": f"/api/v1/competitions/{c.pk}/",
        "competition entrants (REST)": f"/api/v1/competitions/{c.pk}/entries/",
        "competition entrants, page 30 (REST)": (
            # page 30 of 50 entries (the last page with fewer entrants: --quick's 200)
            f"/api/v1/competitions/{c.pk}/entries/?page={min(30, -(-args.entrants // 50))}"
        ),
        "competition page (web)": f"/competitions/{c.pk}/",
        "competition page, entrants page 15 (web)": f"/competitions/{c.pk}/?page=15",
    }
    out: dict[str, Any] = {}
    for name, url in reads.items():

        def call(url: str = url) -> None:
            r = client.get(url)
            assert r.status_code == 200, (url, r.status_code)

        seen: list[str] = []

        def count(execute: Any, sql: str, *rest: Any, seen: list[str] = seen) -> Any:
            seen.append(sql)
            return execute(sql, *rest)

        with connection.execute_wrapper(count):
            call()
        out[name] = summary(time_calls(call, args.rounds), len(seen))
    server = LadderServer("127.0.0.1:0", max_workers=4, rate="0")
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = ladder_pb2_grpc.LadderStub(channel)

            def rpc() -> None:
                stub.GetCompetition(pb.GetCompetitionRequest(competition_id=c.pk), timeout=10)

            out["GetCompetition (gRPC)"] = summary(time_calls(rpc, args.rounds), 0)
    finally:
        server.stop(1.0)
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{args.bots} bots, {args.matches} matches, a competition of {args.entrants} entrants")
    for name, s in out.items():
        flag = "ok" if s["p95_ms"] < TARGET_P95_MS else "OVER"
        print(
            f"{name:<44} p50 {s['p50_ms']:>7} ms  p95 {s['p95_ms']:>7} ms"
            f"  queries {s['queries']:>3}  {flag}"
        )


if __name__ == "__main__":
    main()
