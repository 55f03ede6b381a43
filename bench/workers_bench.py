"""Matches per minute through the Celery workers, against the runner alone, in the same run.

    .venv/bin/python bench/workers_bench.py [--matches 40] [--rounds 4]
        [--broker redis|embedded] [--database-url postgres://.../empty_db] [--json]

Not a test. One engine and four remote house bots (``examples.random_bot``) on
loopback; a fresh database (SQLite in a temp dir unless ``--database-url``);
a broker of the run's own (a ``redis-server`` on a unix socket, or the
embedded one); debug off, as a worker is deployed. For 2 and 4 seats:

- the bound: the same matches (same seeds and bots) played back to back by
  ``workers.runner.run_match`` alone in this process: no database, no broker;
  over streams (protocol 2, the default) and by unary calls (protocol 1),
  match by match;
- three ``celery worker`` processes started once for the run, each on a queue
  of its own and warmed up with a match before any timing: ``-c 1`` over
  streams, ``-c 1`` with ``LADDER_MATCH_STREAMS=0`` (unary) and ``-c 2``. The
  match rows are written first; a batch is timed from its first message sent
  to the last ``finished_at`` written (claim, lease, run, replay, record and
  the broker's trips; not the writes of the rows nor this process's polling).
  The two ``-c 1`` play the same games in ``--rounds`` batches each, in turn,
  the order flipped every batch (S U U S S U ...), so that a load that drifts
  weighs on both alike: matches/min per worker process, streams against
  unary, is ``stream_to_unary``; the same by the CPU time of every process
  (worker, engine, bots, broker; from /proc) is ``stream_to_unary_cpu``, what a
  busy machine blurs least. ``-c 2`` plays all the games in one batch.

Reports matches/min, the ratio to the bound, CPU ms per match of every
process, the load during each configuration, and where a worker's time goes
per match, from the worker's own log line for each match (claim, dial, engine
calls, bot calls, the rest of the runner, replay encoding, recording = replay
storage + the result transaction) and ``other``: the rest of a pool process's
wall time per match (Celery and the broker, the seats' read, the lease
thread); plus replay storage alone (the same bytes stored again). Figures
depend on the machine and its load: compare ratios measured in the same run,
never absolute numbers across runs. ``bench/workers_profile.py`` breaks one
process's match down further (SQL statements by kind, cProfile).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# This process runs matches as a worker does: grpc's I/O chosen before grpc's import.
import digdown.game_io  # noqa: E402, F401  # isort: skip

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


CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of processes ``pids`` so far (from /proc; gone ones count 0)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / CLK_TCK


class BenchWorker:
    """One ``celery worker -c N`` for the whole run, on a queue of its own.

    Started once (a start costs seconds) and warmed up with a match before any
    timing (its first match opens the channels and the handshake pool); the
    bench sends each batch to its queue, so several workers wait side by side
    and a batch is timed from its first send to its last ``finished_at``.
    """

    def __init__(self, name: str, concurrency: int, streams: bool, env: dict[str, str],
                 tmp: Path) -> None:  # fmt: skip
        self.name, self.concurrency, self.streams = name, concurrency, streams
        self.queue = f"bench-{name}"
        worker_env = {**env, "LADDER_MATCH_STREAMS": "1" if streams else "0",
                      "LADDER_MATCH_QUEUE": self.queue}  # fmt: skip
        self.worker = start_worker(worker_env, tmp, f"bench-{name}", concurrency=concurrency)
        self.pids = [self.worker.proc.pid, *sorted(self.worker.children())]

    def stop(self) -> None:
        self.worker.stop()


def play_batch(
    worker: BenchWorker, games: list[tuple[int, list[int]]], others: dict[str, list[int]]
) -> dict[str, Any]:
    """Play ``games`` as queued matches through ``worker``: wall, CPU and per-match parts.

    The match rows are written first (their own messages go to a queue nobody
    reads); then one message per match is sent to the worker's queue, so
    neither the writes nor this process's polling are timed: the batch ends at
    the last ``finished_at`` the worker wrote.
    """
    from django.conf import settings
    from django.db import transaction
    from django.db.models import Max

    from ladder.common.tasks import producer
    from ladder.matches.creation import match_create
    from ladder.matches.models import Match

    with transaction.atomic():
        ids = [match_create(bot_ids=seated, seed=seed).pk for seed, seated in games]
    groups = {"worker": worker.pids, **others}
    load = os.getloadavg()[0]
    cpu0 = {k: cpu_seconds(v) for k, v in groups.items()}
    started = time.time()
    app = producer()
    for match_id in ids:
        app.send_task(settings.LADDER_TASK_PLAY_MATCH, args=[match_id], queue=worker.queue)
    done = Match.objects.filter(pk__in=ids, status__in=["finished", "errored"])
    wait_until(lambda: done.count() == len(ids), 600, "every match recorded", poll_s=0.1)
    cpu1 = {k: cpu_seconds(v) for k, v in groups.items()}
    last = done.aggregate(last=Max("finished_at"))["last"]
    wall = last.timestamp() - started
    errored = Match.objects.filter(pk__in=ids, status="errored").count()
    n = len(ids)
    per_match: dict[str, list[float]] = {part: [] for part in PARTS}
    wanted = set(ids)
    for match_id, fields in TIMINGS.findall(worker.worker.log()):
        if int(match_id) not in wanted:
            continue
        t = {k: float(v) for k, v in (item.split("=") for item in fields.split())}
        t["runner"] = t["run"] - t["engine"] - t["bots"]
        for part in PARTS:
            per_match[part].append(t.get(part, 0.0) * 1000)
    return {
        "matches": n,
        "errored": errored,
        "seconds": wall,
        "cpu_s": {k: cpu1[k] - cpu0[k] for k in groups},
        "load": [load, os.getloadavg()[0]],
        "ms_sums": {k: sum(v) for k, v in per_match.items()},
    }


def summed(workers: int, streams: bool, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One figure of a configuration's batches: matches, wall and CPU added up."""
    matches = sum(r["matches"] for r in runs)
    seconds = sum(r["seconds"] for r in runs)
    cpu = {k: sum(r["cpu_s"][k] for r in runs) for k in runs[0]["cpu_s"]}
    parts = {k: sum(r["ms_sums"][k] for r in runs) / matches for k in PARTS}
    ms = seconds / matches * 1000 * workers  # a pool process's wall time per match
    return {
        # Its name in make bench's report (a list entry is named by its first text).
        "how": f"-c {workers} {'streams' if streams else 'unary'}",
        "workers": workers,
        "streams": streams,
        "matches": matches,
        "batches": len(runs),
        "errored": sum(r["errored"] for r in runs),
        "seconds": seconds,
        "per_min": matches / seconds * 60,
        "ms_per_match": {**parts, "other": ms - sum(parts.values())},
        "cpu_ms_per_match": {k: v / matches * 1000 for k, v in cpu.items()}
        | {"total": sum(cpu.values()) / matches * 1000},
        "load": [min(r["load"][0] for r in runs), max(max(r["load"]) for r in runs)],
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
    p.add_argument(
        "--rounds", type=int, default=4,
        help="batches of -c 1 per way (streams, unary), alternating: S U U S S U ...",
    )  # fmt: skip
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
        # Debug off, as a worker is deployed (debug keeps every SQL statement's text and
        # time); dev mode on for the bots' loopback endpoints.
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "workers-bench-" + "x" * 40,
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
        # The messages match_create sends on its own go where no worker listens: the bench
        # sends each match to the queue of the worker it times (BenchWorker).
        "LADDER_MATCH_QUEUE": "bench-unsent",
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
    workers: dict[str, BenchWorker] = {}
    others = {
        "engine": [engine.pid],
        "bots": [b.pid for b in bot_procs],
        **({"redis": [redis.proc.pid]} if redis is not None and redis.proc else {}),
    }
    try:
        call_command("migrate", verbosity=0)
        owner = User.objects.create_user(username="bench", password="bench-12345678")
        bots = [
            bot_create(owner=owner, name=f"random{i}", kind="remote", endpoint=b.address)
            for i, b in enumerate(bot_procs)
        ]
        report["database"] = django.db.connection.vendor
        log("starting the workers: -c 1 streams, -c 1 unary, -c 2 streams")
        for name, concurrency, streams in (("s1", 1, True), ("u1", 1, False), ("s2", 2, True)):
            workers[name] = BenchWorker(name, concurrency, streams, env, tmp)
        warm_up = [(10**6 + i, [bots[i % 4].pk, bots[(i + 1) % 4].pk]) for i in range(2)]
        for w in workers.values():  # channels, imports, the handshake pool: before any timing
            play_batch(w, warm_up[: w.concurrency], others)
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
            rounds = max(1, min(args.rounds, len(queued)))
            chunks = [queued[r::rounds] for r in range(rounds)]
            # One worker, streams and unary in turn on the same games, batch by batch, the
            # order flipped every batch (S U U S S U ...), so that a load that drifts during
            # the run weighs on both alike; then two pool processes on all of them.
            plan = [
                (name, chunk)
                for r, chunk in enumerate(chunks)
                for name in (("s1", "u1") if r % 2 == 0 else ("u1", "s1"))
            ] + [("s2", queued)]
            batches: dict[str, list[dict[str, Any]]] = {}
            log(f"{seats} seats: {rounds} batches each way through -c 1, then -c 2")
            for name, chunk in plan:
                batches.setdefault(name, []).append(play_batch(workers[name], chunk, others))
            for name, runs in batches.items():
                w = workers[name]
                run = summed(w.concurrency, w.streams, runs)
                run["ratio_to_bound"] = run["per_min"] / bound["per_min"]
                config["workers"].append(run)
            one = {run["streams"]: run for run in config["workers"] if run["workers"] == 1}
            # The target: matches/min per worker process, streams >= 2x unary.
            config["stream_to_unary"] = one[True]["per_min"] / one[False]["per_min"]
            # The same by CPU time of every process of the match (worker, engine, bots,
            # broker): what a busy machine does not blur.
            config["stream_to_unary_cpu"] = (
                one[False]["cpu_ms_per_match"]["total"] / one[True]["cpu_ms_per_match"]["total"]
            )
            report["configs"].append(config)
        report["replay_storage_ms"] = replay_storage_ms()
        report["machine"]["loadavg_at_end"] = os.getloadavg()
    finally:
        for w in workers.values():
            w.stop()
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
        f"{m['cpus']} cpus, load at start {m['loadavg_at_start']}, at end {m['loadavg_at_end']}"
    )
    cols = (*PARTS, "other")
    header = "seats  how                 matches/min  ratio  cpu ms  " + "  ".join(
        f"{p:>6}" for p in cols
    )
    print(header + "   (ms per match; cpu: every process)")
    for config in report["configs"]:
        bound = config["runner_alone"]
        for name, alone in (
            ("runner alone", bound),
            ("runner, unary", config["runner_alone_unary"]),
        ):
            parts = alone["ms_per_match"]
            print(
                f"{config['seats']:>5}  {name:<19} {alone['per_min']:>11.1f}  "
                f"{alone['per_min'] / bound['per_min']:.2f}  {'':>6}  "
                + "  ".join(f"{parts[p]:>6.1f}" if p in parts else f"{'':>6}" for p in cols)
            )
        for run in config["workers"]:
            parts = run["ms_per_match"]
            how = f"-c {run['workers']} {'streams' if run['streams'] else 'unary'}"
            print(
                f"{config['seats']:>5}  {how:<19} {run['per_min']:>11.1f}  "
                f"{run['ratio_to_bound']:.2f}  {run['cpu_ms_per_match']['total']:>6.1f}  "
                + "  ".join(f"{parts[p]:>6.1f}" for p in cols)
                + f"  load {run['load'][0]:.1f}-{run['load'][1]:.1f}"
                + (f"  ({run['errored']} errored)" if run["errored"] else "")
            )
        print(
            f"{config['seats']:>5}  streams / unary per worker process: "
            f"{config['stream_to_unary']:.2f} by wall (target >= 2), "
            f"{config['stream_to_unary_cpu']:.2f} by CPU; the runner alone "
            f"{config['runner_stream_to_unary']:.2f}"
        )
    print(f"replay storage alone: {report['replay_storage_ms']:.1f} ms per replay")
    return 0


if __name__ == "__main__":
    sys.exit(main())
