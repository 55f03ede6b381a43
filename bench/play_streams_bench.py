"""Idle Play streams one Ladder gRPC server process holds: threads, memory, unary latency.

    .venv/bin/python bench/play_streams_bench.py [--levels 0,100,250] [--calls 200] [--json]

Not a test. Starts ``manage.py grpcserver`` on a fresh SQLite database (presence in the
database: no Redis), then opens idle connected-bot streams from this process (grpc.aio:
one task per stream, answering the server's pings, no thread per stream here) in
steps up to each level, and at each level reports, of the server process: streams held
(its welcome count), threads (/proc/PID/task), resident memory and its growth per stream
over level 0, and the p50/p95 of a unary call (``Leaderboard``, one page) while the
streams stay open. The stream limits are raised for the run
(``LADDER_CONNECT_STREAMS_PER_*``); each stream is one bot's (100 bots of one owner, as
many streams each as needed).

The issue's target (one process: 10,000 idle streams, no thread per stream, at most
16 KiB each, unary latency kept) is for a server that holds streams without a thread
each; today's holds two parked threads per stream, so ask levels above a few hundred
only of such a server (``--levels 0,1000,10000``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.processes import start  # noqa: E402


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def proc_figures(pid: int) -> dict[str, float]:
    threads = len(os.listdir(f"/proc/{pid}/task"))
    rss_kib = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kib = int(line.split()[1])
    return {"threads": threads, "rss_kib": rss_kib}


async def hold(stub: Any, token: str, bot: str, welcomed: asyncio.Queue[str]) -> None:
    """One idle connected bot: hello, then pongs to the server's pings until cancelled."""
    from digdown.v1 import ladder_pb2 as pb

    outbox: asyncio.Queue[Any] = asyncio.Queue()
    await outbox.put(pb.PlayClientMessage(hello=pb.PlayHello(bot=bot, label="bench")))

    async def requests() -> Any:
        while True:
            yield await outbox.get()

    call = stub.Play(requests(), metadata=(("authorization", f"Bearer {token}"),))
    try:
        async for message in call:
            kind = message.WhichOneof("kind")
            if kind == "welcome":
                await welcomed.put("ok")
            elif kind == "ping":
                await outbox.put(pb.PlayClientMessage(pong=message.ping))
    except Exception as exc:  # refused or closed: counted as not held
        await welcomed.put(f"refused: {exc}")


async def unary_latency(stub: Any, calls: int) -> dict[str, float]:
    from digdown.v1 import ladder_pb2 as pb

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


async def run(address: str, pid: int, tokens: list[tuple[str, str]], levels: list[int],
              calls: int) -> list[dict[str, Any]]:  # fmt: skip
    import grpc

    from digdown.v1 import ladder_pb2_grpc

    # A few channels, each carrying many streams (HTTP/2 streams on one connection).
    channels = [
        grpc.aio.insecure_channel(address, options=[("grpc.max_concurrent_streams", 100000)])
        for _ in range(8)
    ]
    stubs = [ladder_pb2_grpc.LadderStub(c) for c in channels]
    welcomed: asyncio.Queue[str] = asyncio.Queue()
    tasks: list[asyncio.Task[None]] = []
    held = 0
    rows = []
    base_rss = None
    for level in levels:
        while len(tasks) < level:
            i = len(tasks)
            token, bot = tokens[i % len(tokens)]
            tasks.append(asyncio.create_task(hold(stubs[i % len(stubs)], token, bot, welcomed)))
            if len(tasks) % 200 == 0:
                await asyncio.sleep(0)
        refused = []
        while held + len(refused) < len(tasks):
            got = await asyncio.wait_for(welcomed.get(), 120)
            if got == "ok":
                held += 1
            else:
                refused.append(got)
        await asyncio.sleep(1.0)  # the server settles
        figures = proc_figures(pid)
        if base_rss is None:
            base_rss = figures["rss_kib"]
        latency = await unary_latency(stubs[0], calls)
        row = {
            "streams_asked": level,
            "streams_held": held,
            "refused": len(refused),
            **figures,
            "kib_per_stream": (figures["rss_kib"] - base_rss) / held if held else 0.0,
            "unary": latency,
        }
        log(json.dumps(row))
        rows.append(row)
    for t in tasks:
        t.cancel()
    for c in channels:
        await c.close()
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--levels", default="0,100,250", help="open streams at each measurement")
    p.add_argument("--calls", type=int, default=200, help="unary calls timed at each level")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    levels = sorted({int(x) for x in args.levels.split(",")})
    tmp = Path(tempfile.mkdtemp(prefix="digdown-streams-bench-"))
    most = max(levels)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "LADDER_VAR_DIR": str(tmp / "var"),
        "DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}",
        "LADDER_MEDIA_ROOT": str(tmp / "media"),
        "CELERY_BROKER_URL": "",
        "REDIS_URL": "",
        "LADDER_PRESENCE_URL": "",
        "LADDER_CACHE_URL": "",
        "LADDER_BROKER_DIR": str(tmp / "broker"),
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
    log("grpcserver")
    server = start(
        ["manage.py", "grpcserver", "--rate", "0", "--log-level", "WARNING"],
        tmp, "grpcserver", env=env, health_service="digdown.v1.Ladder",
    )  # fmt: skip
    try:
        rows = asyncio.run(
            run(server.address, server.proc.pid, [(secret, n) for n in names], levels, args.calls)
        )
    finally:
        server.stop()
    report = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "loadavg_at_end": os.getloadavg()},
        "levels": rows,
    }  # fmt: skip
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{'asked':>7} {'held':>6} {'threads':>8} {'RSS MiB':>8} {'KiB/stream':>11}"
          f" {'unary p50':>10} {'p95':>8}")  # fmt: skip
    for r in rows:
        print(f"{r['streams_asked']:>7} {r['streams_held']:>6} {r['threads']:>8}"
              f" {r['rss_kib'] / 1024:>8.1f} {r['kib_per_stream']:>11.1f}"
              f" {r['unary']['p50_ms']:>8.2f}ms {r['unary']['p95_ms']:>6.2f}ms")  # fmt: skip
    print(f"load average at the end: {report['machine']['loadavg_at_end']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
