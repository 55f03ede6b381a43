"""Latency a connected bot adds per decision, against a dialled remote bot and a hosted one.

    .venv/bin/python bench/connect_bench.py [--decisions 2000] [--json]

Not a test. In one run, on loopback, the same DecisionRequest (the first decision
of a real game, from a real engine) is sent by this process, acting as the
worker, through the seat transports the runner uses:

- *dialled*: an SDK bot (``examples.random_bot``) on 127.0.0.1, unary Act;
- *hosted*: the same bot on a unix socket, which is how a worker reaches a
  hosted bot (the sandbox around the process adds nothing per call);
- *connected*: the same act function behind ``digdown.connect`` (a process that
  listens nowhere), reached through ``manage.py grpcserver``: the worker calls
  the grpcserver's relay, which forwards on the bot's Play stream and waits for
  the answer (``workers.connected.ConnectedTransport``).

The three are interleaved decision by decision, so load changes hit them alike.
Also measured: the floor of the two relay designs weighed for docs/connected-bots.md:
one unary gRPC call to the relay (Relay.Status, no bot) against one request/reply
through Redis lists between two processes (LPUSH, BLPOP on the other side, LPUSH
back, BLPOP here), which is what a Redis relay costs before it reaches a bot.

Reports p50/p95 in ms and the added latency (connected minus dialled, minus hosted).
Figures depend on the machine and its load: compare within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# This process runs matches as a worker does: grpc's I/O chosen before grpc's import.
import digdown.game_io  # noqa: E402, F401  # isort: skip

from tests.support.processes import start, start_bot, start_engine  # noqa: E402
from tests.support.redis import RedisServer  # noqa: E402
from tests.support.workers import wait_until  # noqa: E402

REDIS_ECHO = """
import sys, redis
r = redis.Redis(unix_socket_path=sys.argv[1])
while True:
    _, data = r.blpop("bench:req")
    if data == b"stop":
        break
    r.lpush("bench:rep", data)
"""


def log(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


def quantiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": statistics.median(ordered) * 1000,
        "p95_ms": ordered[int(0.95 * (len(ordered) - 1))] * 1000,
        "n": len(ordered),
    }


def first_decision(engine_address: str) -> Any:
    import grpc

    from digdown.v1 import bot_pb2, engine_pb2, engine_pb2_grpc, game_pb2

    with grpc.insecure_channel(engine_address) as channel:
        created = engine_pb2_grpc.EngineStub(channel).NewGame(
            engine_pb2.NewGameRequest(
                config=game_pb2.GameConfig(ruleset="dd-1", seed=3, num_seats=4, difficulty="normal")
            ),
            timeout=10,
        )
    d = created.decision
    return bot_pb2.DecisionRequest(
        game_id=created.game_id,
        seat=d.seat,
        observation=d.observation,
        legal_actions=d.legal_actions,
        time_left_ms=30000,
        deadline_ms=1000,
        events=created.events,
        ply=d.ply,
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--decisions", type=int, default=2000, help="per transport")
    p.add_argument("--json", action="store_true")
    p.add_argument("--keep", action="store_true", help="keep the temp dir (logs, database)")
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="digdown-connect-bench-"))
    redis = RedisServer(tmp)
    redis.start()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "DJANGO_DEBUG": "1",
        "LADDER_DEV_MODE": "1",
        "LADDER_VAR_DIR": str(tmp / "var"),
        "DATABASE_URL": f"sqlite:///{tmp / 'bench.sqlite3'}",
        "LADDER_MEDIA_ROOT": str(tmp / "media"),
        "CELERY_BROKER_URL": "",
        "REDIS_URL": "",
        "LADDER_BROKER_DIR": str(tmp / "broker"),
        "LADDER_PRESENCE_URL": redis.url,
        "LADDER_CACHE_URL": "",
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    from digdown.v1 import bot_pb2, relay_pb2
    from ladder.accounts.models import User
    from ladder.accounts.services import token_create
    from ladder.bots import presence
    from ladder.bots.services import bot_create
    from workers.connected import CHANNELS, ConnectedTransport
    from workers.runner import TimeControl
    from workers.runner.transport import DialledTransport

    procs: list[Any] = []
    report: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_at_start": os.getloadavg(),
        }
    }
    try:
        log("database, engine, bots, grpcserver")
        call_command("migrate", verbosity=0)
        owner = User.objects.create_user(username="bench", password="bench-12345678")
        secret = token_create(user=owner, name="bench").secret
        bot = bot_create(owner=owner, name="plugged", kind="connected")
        engine = start_engine(tmp)
        procs.append(engine)
        request = first_decision(engine.address)
        dialled = start_bot("examples.random_bot", tmp, "dialled")
        sock = tmp / "hosted.sock"
        with (tmp / "hosted.log").open("wb") as out:
            hosted = subprocess.Popen(
                [sys.executable, "-m", "examples.random_bot", "--listen", f"unix:{sock}"],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        wait_until(sock.exists, 30, "the hosted bot's socket")
        server = start(
            ["manage.py", "grpcserver", "--rate", "0", "--log-level", "WARNING"],
            tmp, "grpcserver", env=env, health_service="digdown.v1.Ladder",
        )  # fmt: skip
        procs += [dialled, server]
        with (tmp / "connected.log").open("wb") as out:
            connected_bot = subprocess.Popen(
                [sys.executable, "-m", "digdown.connect", "--connect", server.address,
                 "--bot", "plugged", "--log-level", "WARNING"],
                cwd=ROOT, env={**env, "DIGDOWN_TOKEN": secret}, stdout=out,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        wait_until(lambda: presence.streams_of_bot(bot.pk), 30, "the connected bot's stream")
        echo = subprocess.Popen([sys.executable, "-c", REDIS_ECHO, str(redis.socket)])

        tc = TimeControl(streams=False)
        hs = bot_pb2.HandshakeRequest(protocol_version=1)  # unary Act, as protocol 1
        transports = {
            "dialled": DialledTransport(dialled.address, tc),
            "hosted": DialledTransport(f"unix:{sock}", tc),
            "connected": ConnectedTransport(
                bot_id=bot.pk, bot_name="plugged", match_id=1, seat=0, time_control=tc
            ),
        }
        for t in transports.values():
            t.handshake(hs, 5.0)
        stream = transports["connected"].stream  # type: ignore[attr-defined]
        relay = CHANNELS.stub(stream.relay)
        status = relay_pb2.RelayStatusRequest(stream_id=stream.stream_id)
        metadata = (("x-relay-key", presence.relay_key()),)
        r = presence.client()

        def relay_floor() -> None:
            relay.Status(status, timeout=5, metadata=metadata)

        payload = request.SerializeToString()

        def redis_floor() -> None:
            r.lpush("bench:req", payload)
            r.blpop("bench:rep", timeout=5)

        calls = {name: (lambda t=t: t.act(request, 5.0)) for name, t in transports.items()}
        calls["relay hop (gRPC unary, no bot)"] = relay_floor
        calls["redis hop (lists, no bot)"] = redis_floor
        samples: dict[str, list[float]] = {name: [] for name in calls}
        warmup = 200
        log(f"{args.decisions} decisions per transport (+{warmup} warm-up), interleaved")
        for i in range(warmup + args.decisions):
            for name, call in calls.items():
                started = time.perf_counter()
                call()
                took = time.perf_counter() - started
                if i >= warmup:
                    samples[name].append(took)
        r.lpush("bench:req", b"stop")
        echo.wait(10)
        results = {name: quantiles(s) for name, s in samples.items()}
        report["results"] = results
        report["added_ms"] = {
            "connected_minus_dialled_p50": results["connected"]["p50_ms"]
            - results["dialled"]["p50_ms"],
            "connected_minus_dialled_p95": results["connected"]["p95_ms"]
            - results["dialled"]["p95_ms"],
            "connected_minus_hosted_p50": results["connected"]["p50_ms"]
            - results["hosted"]["p50_ms"],
            "connected_minus_hosted_p95": results["connected"]["p95_ms"]
            - results["hosted"]["p95_ms"],
        }
        report["machine"]["loadavg_at_end"] = os.getloadavg()
        for child in (connected_bot, hosted):
            child.terminate()
            child.wait(10)
    finally:
        for proc in procs:
            proc.stop()
        redis.kill()
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"per decision, loopback, {args.decisions} each ({report['machine']})")
        for name, q in report["results"].items():
            print(f"  {name:34s} p50 {q['p50_ms']:7.3f} ms   p95 {q['p95_ms']:7.3f} ms")
        for name, value in report["added_ms"].items():
            print(f"  added {name:34s} {value:+7.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
