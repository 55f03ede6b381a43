"""Idle Play streams one Ladder gRPC server process holds: threads, memory, unary latency.

    .venv/bin/python bench/play_streams_bench.py [--levels 0,1000,10000] [--calls 200]
        [--per-connection 1] [--clients N] [--redis URL] [--json]

Not a test. Starts ``manage.py grpcserver`` (the product's entry) on a fresh SQLite
database (presence of connected bots in that database, or in Redis with ``--redis``),
then opens idle connected-bot streams from client *processes* of their own (grpc.aio:
one task per stream, answering the server's pings), in steps up to each level, and at
each level reports, of the server process: streams held (welcomes received), threads
(/proc/PID/task), resident memory and its growth per stream over level 0, and the
p50/p95 of a unary call (``Leaderboard``, one page, from this process on a channel of
its own) while the streams stay open. Each stream is one connection by default
(``--per-connection 1``: as bots connect), so 10,000 streams need 10,000 descriptors
in the server and as many among the clients: every process raises its open-files
limit to the hard one (``ulimit -Hn`` must allow it). The stream limits are raised
for the run (``LADDER_CONNECT_STREAMS_PER_*``), and the failed-authentication limit
of an address (every stream comes from loopback); the streams belong to 100 bots of
one owner, and each client process has at most 50 streams waiting for their welcome
at once (bots connecting, not one burst of thousands of calls).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.processes import start  # noqa: E402

WELCOME_TIMEOUT_S = 600.0  # a level's streams, all answered (welcomed or refused)
OPENING = 50  # streams of one client process waiting for their welcome at once


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def raise_open_files() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def proc_figures(pid: int) -> dict[str, float]:
    threads = len(os.listdir(f"/proc/{pid}/task"))
    rss_kib = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kib = int(line.split()[1])
    return {"threads": threads, "rss_kib": rss_kib}


# --- a client process: holds streams, told how many on stdin ---------------------------


async def hold(
    stub: Any, token: str, bot: str, answered: asyncio.Queue[str], opening: asyncio.Semaphore
) -> None:
    """One idle connected bot: hello, then pongs to the server's pings until cancelled.
    At most ``opening`` streams of a client wait for their welcome at once (bots that
    connect, not a burst of thousands of calls the server has not taken up yet)."""
    from digdown.v1 import ladder_pb2 as pb

    await opening.acquire()

    outbox: asyncio.Queue[Any] = asyncio.Queue()
    await outbox.put(pb.PlayClientMessage(hello=pb.PlayHello(bot=bot, label="bench")))

    async def requests() -> Any:
        while True:
            yield await outbox.get()

    call = stub.Play(requests(), metadata=(("authorization", f"Bearer {token}"),))
    welcomed = False
    try:
        async for message in call:
            kind = message.WhichOneof("kind")
            if kind == "welcome":
                welcomed = True
                opening.release()
                await answered.put("ok")
            elif kind == "ping":
                await outbox.put(pb.PlayClientMessage(pong=message.ping))
        if not welcomed:
            opening.release()
            await answered.put("refused: ended before its welcome")
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # refused or closed: counted as not held
        if not welcomed:
            opening.release()
            await answered.put(f"refused: {str(exc)[:300]}")


async def client(address: str, pairs: list[tuple[str, str]], per_connection: int) -> None:
    """Open more streams each time stdin says ``N`` (the total to hold); answer a JSON
    line with how many are held; stop at ``quit``."""
    import grpc

    from digdown.v1 import ladder_pb2_grpc

    loop = asyncio.get_running_loop()
    stubs: list[Any] = []
    channels: list[Any] = []
    answered: asyncio.Queue[str] = asyncio.Queue()
    opening = asyncio.Semaphore(OPENING)
    tasks: list[asyncio.Task[None]] = []
    held, refused = 0, list[str]()
    while (line := (await loop.run_in_executor(None, sys.stdin.readline)).strip()) != "quit":
        if not line:
            break
        want = int(line)
        while len(tasks) < want:
            i = len(tasks)
            if i % per_connection == 0:
                channel = grpc.aio.insecure_channel(
                    address, options=[("grpc.max_concurrent_streams", 100000),
                                      ("grpc.use_local_subchannel_pool", 1)],
                )  # fmt: skip
                channels.append(channel)
                stubs.append(ladder_pb2_grpc.LadderStub(channel))
            token, bot = pairs[i % len(pairs)]
            tasks.append(asyncio.create_task(hold(stubs[-1], token, bot, answered, opening)))
            if i % 100 == 99:
                await asyncio.sleep(0)
        while held + len(refused) < len(tasks):
            got = await asyncio.wait_for(answered.get(), WELCOME_TIMEOUT_S)
            if got == "ok":
                held += 1
            else:
                refused.append(got)
        print(json.dumps({"held": held, "refused": len(refused), "why": refused[:3]}), flush=True)
    for t in tasks:
        t.cancel()
    for c in channels:
        await c.close()


# --- the run ---------------------------------------------------------------------------


async def unary_latency(address: str, calls: int) -> dict[str, float]:
    import grpc

    from digdown.v1 import ladder_pb2 as pb
    from digdown.v1 import ladder_pb2_grpc

    async with grpc.aio.insecure_channel(address) as channel:
        stub = ladder_pb2_grpc.LadderStub(channel)
        await stub.Leaderboard(pb.LeaderboardRequest(page_size=10), timeout=30)  # warm
        took = []
        for _ in range(calls):
            t = time.perf_counter()
            await stub.Leaderboard(pb.LeaderboardRequest(page_size=10), timeout=30)
            took.append(time.perf_counter() - t)
    took.sort()
    return {
        "p50_ms": statistics.median(took) * 1000,
        "p95_ms": took[int(0.95 * (len(took) - 1))] * 1000,
    }


def run(
    address: str,
    pid: int,
    pairs_file: Path,
    levels: list[int],
    calls: int,
    clients: int,
    per_connection: int,
    env: dict[str, str],
) -> list[dict[str, Any]]:
    command = [sys.executable, __file__, "--client", address, "--pairs", str(pairs_file),
               "--per-connection", str(per_connection)]  # fmt: skip
    procs = [
        subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(clients)
    ]
    rows = []
    base_rss = None
    try:
        for level in levels:
            share = [level // clients + (1 if i < level % clients else 0) for i in range(clients)]
            started = time.monotonic()
            for proc, n in zip(procs, share, strict=True):
                assert proc.stdin is not None
                proc.stdin.write(f"{n}\n")
                proc.stdin.flush()
            held = refused = 0
            why: list[str] = []
            for proc in procs:
                assert proc.stdout is not None
                answer = proc.stdout.readline()
                if not answer:
                    raise RuntimeError("a client process ended early")
                got = json.loads(answer)
                held, refused = held + got["held"], refused + got["refused"]
                why += got["why"]
            opened_s = time.monotonic() - started
            time.sleep(3.0)  # the server settles (a heartbeat or more)
            figures = proc_figures(pid)
            if base_rss is None:
                base_rss = figures["rss_kib"]
            latency = asyncio.run(unary_latency(address, calls))
            figures_after = proc_figures(pid)
            row = {
                "streams_asked": level,
                "streams_held": held,
                "refused": refused,
                "refusals": why[:3],
                "open_s": round(opened_s, 1),
                **figures,
                "threads_after_calls": figures_after["threads"],
                "kib_per_stream": (figures["rss_kib"] - base_rss) / held if held else 0.0,
                "unary": latency,
            }
            log(json.dumps(row))
            rows.append(row)
    finally:
        for proc in procs:
            if proc.stdin is not None:
                try:
                    proc.stdin.write("quit\n")
                    proc.stdin.close()
                except OSError:
                    pass
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--levels", default="0,1000,10000", help="open streams at each measurement")
    p.add_argument("--calls", type=int, default=200, help="unary calls timed at each level")
    p.add_argument("--per-connection", type=int, default=1, help="streams per client connection")
    p.add_argument("--clients", type=int, default=0, help="client processes (0: one per 2,500)")
    p.add_argument("--redis", default="", help="presence in this Redis (default: the database)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--client", help=argparse.SUPPRESS)  # a client process: the server address
    p.add_argument("--pairs", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args()
    hard = raise_open_files()
    if args.client:
        pairs = [tuple(pair) for pair in json.loads(args.pairs.read_text())]
        asyncio.run(client(args.client, pairs, max(1, args.per_connection)))  # type: ignore[arg-type]
        return 0
    levels = sorted({int(x) for x in args.levels.split(",")})
    most = max(levels)
    clients = args.clients or max(1, math.ceil(most / 2500))
    need = most // max(1, args.per_connection) + 200
    if hard < need:
        log(f"the open-files limit is {hard}; {need} descriptors are needed (ulimit -Hn)")
        return 2
    tmp = Path(tempfile.mkdtemp(prefix="digdown-streams-bench-"))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "DJANGO_DEBUG": "0",  # production: no query log growing with every admission
        "DJANGO_SECRET_KEY": os.environ.get("DJANGO_SECRET_KEY") or secrets.token_hex(32),
        "LADDER_VAR_DIR": str(tmp / "var"),
        "DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}",
        "LADDER_MEDIA_ROOT": str(tmp / "media"),
        "CELERY_BROKER_URL": "",
        "REDIS_URL": "",
        "LADDER_PRESENCE_URL": args.redis,
        "LADDER_CACHE_URL": "",
        "LADDER_BROKER_DIR": str(tmp / "broker"),
        # Every bench bot connects from loopback: the failed-authentication limit of one
        # address counts each token check in flight (a reserved try), so a burst of
        # thousands of admissions from one address would pass it.
        "LADDER_AUTH_FAILURES_PER_ADDRESS": "1000000/15min",
        "LADDER_CONNECT_STREAMS_PER_BOT": str(most + 1),
        "LADDER_CONNECT_STREAMS_PER_USER": str(most + 1),
        "LADDER_CONNECT_STREAMS_PER_PROCESS": str(most + 1),
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    from ladder.accounts.models import User
    from ladder.accounts.services import token_create
    from ladder.bots.services import bot_create

    log("database")
    call_command("migrate", verbosity=0)
    owner = User.objects.create_user(username="bench", password="bench-12345678", is_staff=True)
    secret = token_create(user=owner, name="bench").secret
    names = [f"idle{i}" for i in range(100)]
    for name in names:
        bot_create(owner=owner, name=name, kind="connected")
    pairs_file = tmp / "pairs.json"
    pairs_file.write_text(json.dumps([(secret, n) for n in names]))
    log(f"grpcserver; {clients} client processes, {args.per_connection} stream(s) a connection")
    server = start(
        ["manage.py", "grpcserver", "--rate", "0", "--log-level", "WARNING"],
        tmp, "grpcserver", env=env, health_service="digdown.v1.Ladder",
    )  # fmt: skip
    try:
        rows = run(
            server.address, server.proc.pid, pairs_file, levels, args.calls, clients,
            max(1, args.per_connection), env,
        )  # fmt: skip
    finally:
        server.stop()
    report = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "loadavg_at_end": os.getloadavg()},
        "clients": clients,
        "streams_per_connection": args.per_connection,
        "presence": "redis" if args.redis else "database",
        "levels": rows,
    }  # fmt: skip
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{'asked':>7} {'held':>6} {'threads':>8} {'RSS MiB':>8} {'KiB/stream':>11}"
          f" {'unary p50':>10} {'p95':>8} {'opened in':>10}")  # fmt: skip
    for r in rows:
        print(f"{r['streams_asked']:>7} {r['streams_held']:>6} {r['threads']:>8}"
              f" {r['rss_kib'] / 1024:>8.1f} {r['kib_per_stream']:>11.1f}"
              f" {r['unary']['p50_ms']:>8.2f}ms {r['unary']['p95_ms']:>6.2f}ms"
              f" {r['open_s']:>9.1f}s")  # fmt: skip
    print(f"load average at the end: {report['machine']['loadavg_at_end']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
