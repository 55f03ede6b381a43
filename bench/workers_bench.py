"""Matches per minute through the Celery workers, against the runner alone, in the same run.

    .venv/bin/python bench/workers_bench.py [--matches 40] [--broker redis|embedded]
        [--database-url postgres://.../empty_db] [--json]

Not a test. One engine and four remote house bots (``examples.random_bot``) on
loopback; a fresh database (SQLite in a temp dir unless ``--database-url``);
a broker of the run's own (a ``redis-server`` on a unix socket, or the
embedded one). For 2 and 4 seats:

- the bound: the same matches (same seeds and bots) played back to back by
  ``workers.runner.run_match`` alone in this process: no database, no broker;
  over streams (protocol 2, the default) and by unary calls (protocol 1);
- ``celery worker -c 1`` and ``-c 2`` playing them as queued matches
  (``match_create``, which enqueues; claim, lease, run, replay, record),
  timed from the first enqueue to the last recorded result; and ``-c 1``
  again with ``LADDER_MATCH_STREAMS=0`` (unary), the two alternating on each
  half of the matches: matches/min per worker process, streams against unary,
  is ``stream_to_unary``. The bound is played both ways too, match by match.

Reports matches/min, the ratio to the bound, and where a worker's time goes
per match, from the worker's own log line for each match (claim, dial, engine
calls, bot calls, the rest of the runner, replay encoding, recording = replay
storage + the result transaction), plus replay storage alone (the same bytes
stored again). Figures depend on the machine and its load: compare ratios
measured in the same run, never absolute numbers across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.processes import start_bot, start_engine  # noqa: E402
from tests.support.redis import RedisServer  # noqa: E402
from tests.support.workers import start_worker, wait_until  # noqa: E402

TIMINGS = re.compile(r"match (\d+) finished attempt \d+ .*\[(.*)\]")
PARTS = ("claim", "dial", "engine", "bots", "runner", "replay", "record")


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def lineups(n: int, seats: int, bots: list[Any]) -> list[tuple[int, list[Any]]]:
    """``n`` (seed, seated bots) pairs, the line-up rotating one seat per match."""
    return [(1000 + i, [bots[(i + s) % len(bots)] for s in range(seats)]) for i in range(n)]


def runner_alone(engine: str, games: list[tuple[int, list[str]]]) -> dict[bool, dict[str, Any]]:
    """The bound, over streams (True) and by unary calls (False): each game played both
    ways, one after the other, so that both see the same load."""
    from dataclasses import replace

    from workers.queued_match import time_control
    from workers.runner import EnginePool, run_match

    pool = EnginePool(engine)
    tcs = {streams: replace(time_control(), streams=streams) for streams in (True, False)}
    sums = {streams: {"seconds": 0.0, "engine": 0.0, "bots": 0.0} for streams in tcs}
    for tc in tcs.values():  # warm-up: the engine channel, imports, the keeper thread
        run_match(pool, games[0][1], seed=games[0][0] + 10**6, time_control=tc)
    for seed, seated in games:
        for streams, tc in tcs.items():
            started = time.perf_counter()
            outcome = run_match(pool, seated, seed=seed, time_control=tc)
            total = sums[streams]
            total["seconds"] += time.perf_counter() - started
            total["engine"] += outcome.engine_s
            total["bots"] += outcome.bots_s
    pool.close()
    n = len(games)
    return {
        streams: {
            "matches": n,
            "seconds": t["seconds"],
            "per_min": n / t["seconds"] * 60,
            "ms_per_match": {"engine": t["engine"] / n * 1000, "bots": t["bots"] / n * 1000},
        }
        for streams, t in sums.items()
    }


def merged(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One figure of several runs of the same configuration (matches and time added up)."""
    matches = sum(r["matches"] for r in runs)
    seconds = sum(r["seconds"] for r in runs)
    return {
        **runs[0],
        "matches": matches,
        "errored": sum(r["errored"] for r in runs),
        "seconds": seconds,
        "per_min": matches / seconds * 60,
        "ms_per_match": {
            k: sum(r["ms_per_match"][k] * r["matches"] for r in runs) / matches
            for k in runs[0]["ms_per_match"]
        },
    }


def through_workers(
    concurrency: int, games: list[tuple[int, list[int]]], env: dict[str, str], tmp: Path
) -> dict[str, Any]:
    from ladder.matches.models import Match
    from ladder.matches.services import match_create

    worker = start_worker(env, tmp, f"bench-c{concurrency}-{time.monotonic_ns()}",
                          concurrency=concurrency)  # fmt: skip
    try:
        started = time.perf_counter()
        ids = [match_create(bot_ids=seated, seed=seed).pk for seed, seated in games]
        done = Match.objects.filter(pk__in=ids, status__in=["finished", "errored"])
        wait_until(lambda: done.count() == len(ids), 600, "every match recorded", poll_s=0.05)
        wall = time.perf_counter() - started
    finally:
        worker.stop()
    errored = Match.objects.filter(pk__in=ids, status="errored").count()
    per_match: dict[str, list[float]] = {part: [] for part in PARTS}
    for match_id, fields in TIMINGS.findall(worker.log()):
        if int(match_id) not in ids:
            continue
        t = {k: float(v) for k, v in (item.split("=") for item in fields.split())}
        t["runner"] = t["run"] - t["engine"] - t["bots"]
        for part in PARTS:
            per_match[part].append(t.get(part, 0.0) * 1000)
    return {
        "workers": concurrency,
        "matches": len(ids),
        "errored": errored,
        "seconds": wall,
        "per_min": len(ids) / wall * 60,
        "ms_per_match": {k: statistics.fmean(v) if v else 0.0 for k, v in per_match.items()},
    }


def replay_storage_ms(sample: int = 20) -> float:
    """Storing a recorded replay's bytes again (same storage): the storage part of recording."""
    from ladder.matches.models import Match
    from ladder.matches.replays import replay_store

    matches = list(Match.objects.filter(status="finished")[:sample])
    started = time.perf_counter()
    for i, match in enumerate(matches):
        with match.replay.open("rb") as f:
            replay_store(match_id=10_000_000 + i, data=f.read())
    return (time.perf_counter() - started) / max(1, len(matches)) * 1000


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "loadavg_at_start": os.getloadavg(),
        "platform": platform.platform(),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--matches", type=int, default=40, help="matches per configuration")
    p.add_argument("--broker", choices=["redis", "embedded"], default="redis")
    p.add_argument("--database-url", default="", help="an empty database (default: SQLite)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (database, worker logs)")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="digdown-workers-bench-"))
    redis = RedisServer(tmp) if args.broker == "redis" else None
    if redis is not None:
        redis.start()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "DJANGO_DEBUG": "1",
        "LADDER_DEV_MODE": "1",
        "LADDER_VAR_DIR": str(tmp / "var"),
        "DATABASE_URL": args.database_url or f"sqlite:///{tmp / 'bench.sqlite3'}",
        "LADDER_MEDIA_ROOT": str(tmp / "media"),
        "CELERY_BROKER_URL": redis.url if redis is not None else "",
        "REDIS_URL": "",
        "LADDER_BROKER_DIR": str(tmp / "broker"),
        # As docker-compose ships it: a worker keeps its database connection across tasks
        # (Django's default of 0 opens one per task: a PostgreSQL log-in per match).
        "LADDER_DB_CONN_MAX_AGE": os.environ.get("LADDER_DB_CONN_MAX_AGE", "60"),
    }
    engine = start_engine(tmp)
    bot_procs = [
        start_bot("examples.random_bot", tmp, f"random{i}", "--seed", str(i)) for i in range(4)
    ]
    env["ENGINE_ADDRESS"] = engine.address
    os.environ.update(env)  # this process enqueues and reads results like the ladder does
    import django

    django.setup()
    from django.core.management import call_command

    from ladder.accounts.models import User
    from ladder.bots.services import bot_create

    report: dict[str, Any] = {"machine": machine(), "broker": args.broker, "configs": []}
    try:
        call_command("migrate", verbosity=0)
        owner = User.objects.create_user(username="bench", password="bench-12345678")
        bots = [
            bot_create(owner=owner, name=f"random{i}", kind="remote", endpoint=b.address)
            for i, b in enumerate(bot_procs)
        ]
        report["database"] = django.db.connection.vendor
        for seats in (2, 4):
            games = lineups(args.matches, seats, list(range(4)))
            log(f"{seats} seats: runner alone, {args.matches} matches")
            addressed = [(s, [bot_procs[i].address for i in g]) for s, g in games]
            both = runner_alone(engine.address, addressed)
            bound, bound_unary = both[True], both[False]
            config: dict[str, Any] = {
                "seats": seats,
                "runner_alone": bound,
                "runner_alone_unary": bound_unary,
                "runner_stream_to_unary": bound["per_min"] / bound_unary["per_min"],
                "workers": [],
            }
            queued = [(s, [bots[i].pk for i in g]) for s, g in games]
            half = len(queued) // 2 or 1
            # One worker, streams and unary in turn on each half of the games (ABBA), so
            # that a load that drifts during the run weighs on both alike; then two.
            plan = [
                (1, True, queued[:half]),
                (1, False, queued[:half]),
                (1, False, queued[half:]),
                (1, True, queued[half:]),
                (2, True, queued),
            ]
            parts: dict[tuple[int, bool], list[dict[str, Any]]] = {}
            for concurrency, streams, chunk in plan:
                if not chunk:
                    continue
                how = "streams" if streams else "unary"
                log(f"{seats} seats: {concurrency} worker process(es), {how}, {len(chunk)}")
                worker_env = {**env, "LADDER_MATCH_STREAMS": "1" if streams else "0"}
                parts.setdefault((concurrency, streams), []).append(
                    through_workers(concurrency, chunk, worker_env, tmp)
                )
            for (concurrency, streams), runs in parts.items():
                run = merged(runs)
                # Its name in make bench's report (a list entry is named by its first text).
                run["how"] = f"-c {concurrency} {'streams' if streams else 'unary'}"
                run["streams"] = streams
                run["ratio_to_bound"] = run["per_min"] / bound["per_min"]
                config["workers"].append(run)
            one = {run["streams"]: run for run in config["workers"] if run["workers"] == 1}
            # The target: matches/min per worker process, streams >= 2x unary.
            config["stream_to_unary"] = one[True]["per_min"] / one[False]["per_min"]
            report["configs"].append(config)
        report["replay_storage_ms"] = replay_storage_ms()
    finally:
        for proc in [engine, *bot_procs]:
            proc.stop()
        if redis is not None:
            redis.kill()
        if args.keep:
            log(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    m = report["machine"]
    print(
        f"broker {args.broker}, database {report['database']}, {args.matches} matches each, "
        f"{m['cpus']} cpus, load at start {m['loadavg_at_start']}"
    )
    header = "seats  how              matches/min  ratio  " + "  ".join(f"{p:>7}" for p in PARTS)
    print(header + "   (ms per match)")
    for config in report["configs"]:
        bound = config["runner_alone"]
        parts = bound["ms_per_match"]
        for name, alone in (
            ("runner alone    ", bound),
            ("runner, unary   ", config["runner_alone_unary"]),
        ):
            parts = alone["ms_per_match"]
            print(
                f"{config['seats']:>5}  {name} {alone['per_min']:>11.1f}  "
                f"{alone['per_min'] / bound['per_min']:.2f}  "
                + "  ".join(
                    f"{parts.get(p, 0.0):>7.1f}" if p in parts else f"{'':>7}" for p in PARTS
                )
            )
        for run in config["workers"]:
            parts = run["ms_per_match"]
            how = "" if run["streams"] else ", unary"
            print(
                f"{config['seats']:>5}  {run['workers']} worker proc(s){how} "
                f"{run['per_min']:>11.1f}  "
                f"{run['ratio_to_bound']:.2f}  "
                + "  ".join(f"{parts[p]:>7.1f}" for p in PARTS)
                + (f"  ({run['errored']} errored)" if run["errored"] else "")
            )
        print(
            f"{config['seats']:>5}  streams / unary: {config['stream_to_unary']:.2f} per worker "
            f"process (target >= 2), {config['runner_stream_to_unary']:.2f} for the runner alone"
        )
    print(f"replay storage alone: {report['replay_storage_ms']:.1f} ms per replay")
    return 0


if __name__ == "__main__":
    sys.exit(main())
