"""Where one worker process's time goes per queued match, without Celery: parts and SQL.

    .venv/bin/python bench/workers_profile.py [--matches 40] [--seats 2] [--unary]
        [--database-url postgres://.../empty_db] [--cprofile out.pstats] [--json]

Not a test. The setting of ``workers_bench.py`` (one engine, four remote random
house bots on loopback, a fresh database, SQLite unless ``--database-url``), but
the matches are played by ``workers.queued_match.play_queued_match`` in this
process, one after the other, as a pool process would: claim, dial, play,
replay, record. Reports per match: wall and CPU time of this process, each part
of the match's log line, and every SQL statement it ran, by kind
(its first words, table included), so a change to the recording path shows up
as statements counted, not only as milliseconds on a shared machine. With
``--cprofile`` the batch runs under cProfile and the statistics are written
there (``python -m pstats``).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# This process runs matches as a worker does: grpc's I/O chosen before grpc's import.
import digdown.game_io  # noqa: E402, F401  # isort: skip

from tests.support.processes import start_bot, start_engine  # noqa: E402

WORDS = re.compile(r'^\s*(\w+)(?:.*?\b(?:FROM|INTO|UPDATE)\s+"?(\w+)"?)?', re.S | re.I)


def kind(sql: str) -> str:
    """A statement's kind: its verb and first table (``SELECT matches_match``)."""
    m = WORDS.match(sql)
    if not m:
        return sql[:30]
    verb, table = m.group(1).upper(), m.group(2) or ""
    if verb == "UPDATE":
        table = sql.split()[1].strip('"')
    return f"{verb} {table}".strip()


class Statements:
    """Counts every SQL statement this process's main thread runs (a Django execute wrapper)."""

    def __init__(self) -> None:
        self.by_kind: Counter[str] = Counter()

    def __call__(self, execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        self.by_kind[kind(sql)] += 1
        return execute(sql, params, many, context)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=40)
    p.add_argument("--seats", type=int, default=2)
    p.add_argument("--unary", action="store_true", help="LADDER_MATCH_STREAMS=0")
    p.add_argument("--database-url", default="")
    p.add_argument("--cprofile", default="", help="write cProfile statistics here")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="digdown-workers-profile-"))
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "ladder.settings",
            "DJANGO_DEBUG": "0",  # as a worker is deployed
            "DJANGO_SECRET_KEY": "workers-profile-" + "x" * 40,
            "LADDER_DEV_MODE": "1",
            "LADDER_VAR_DIR": str(tmp / "var"),
            "DATABASE_URL": args.database_url or f"sqlite:///{tmp / 'profile.sqlite3'}",
            "LADDER_MEDIA_ROOT": str(tmp / "media"),
            "CELERY_BROKER_URL": "",
            "REDIS_URL": "",
            "LADDER_BROKER_DIR": str(tmp / "broker"),
            "LADDER_DB_CONN_MAX_AGE": os.environ.get("LADDER_DB_CONN_MAX_AGE", "60"),
            "LADDER_MATCH_STREAMS": "0" if args.unary else "1",
        }
    )
    engine = start_engine(tmp)
    bot_procs = [
        start_bot("examples.random_bot", tmp, f"random{i}", "--seed", str(i)) for i in range(4)
    ]
    os.environ["ENGINE_ADDRESS"] = engine.address
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    from ladder.accounts.models import User
    from ladder.bots.services import bot_create
    from ladder.matches.creation import match_create
    from workers import queued_match

    try:
        call_command("migrate", verbosity=0)
        owner = User.objects.create_user(username="bench", password="bench-12345678")
        bots = [
            bot_create(owner=owner, name=f"random{i}", kind="remote", endpoint=b.address).pk
            for i, b in enumerate(bot_procs)
        ]
        n = args.matches + 2
        ids = [
            match_create(bot_ids=[bots[(i + s) % 4] for s in range(args.seats)], seed=1000 + i).pk
            for i in range(n)
        ]
        for match_id in ids[:2]:  # warm-up: channels, imports, the handshake pool
            queued_match.play_queued_match(match_id)
        counter = Statements()
        parts: Counter[str] = Counter()
        profiler = cProfile.Profile() if args.cprofile else None
        with connection.execute_wrapper(counter):
            wall0, cpu0 = time.perf_counter(), time.process_time()
            if profiler:
                profiler.enable()
            for match_id in ids[2:]:
                report = queued_match.play_queued_match(match_id)
                assert report.status == "finished", report.line()
                for k, v in report.timings.items():
                    parts[k] += v
            if profiler:
                profiler.disable()
            wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        if profiler:
            profiler.dump_stats(args.cprofile)
    finally:
        for proc in [engine, *bot_procs]:
            proc.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    m = args.matches
    out = {
        "matches": m,
        "seats": args.seats,
        "streams": not args.unary,
        "database": connection.vendor,
        "ms_per_match": {"wall": wall / m * 1000, "cpu": cpu / m * 1000}
        | {k: v / m * 1000 for k, v in parts.items()},
        "statements_per_match": {k: v / m for k, v in counter.by_kind.most_common()},
        "statements_total_per_match": sum(counter.by_kind.values()) / m,
        "loadavg": os.getloadavg(),
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(
        f"{m} matches, {args.seats} seats, {'streams' if not args.unary else 'unary'}, "
        f"{out['database']}, load {out['loadavg']}"
    )
    print("ms per match: " + "  ".join(f"{k} {v:.1f}" for k, v in out["ms_per_match"].items()))
    print(f"SQL statements per match: {out['statements_total_per_match']:.1f}")
    for k, v in out["statements_per_match"].items():
        print(f"  {v:6.2f}  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
