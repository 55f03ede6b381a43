"""What the defences cost and what they keep working, as figures from one run.

    .venv/bin/python bench/security_bench.py [--load 200] [--seconds 5] [--json]

Not a test. Measured in the same run:

(a) health under load: a real `engine.server` (default limits: 16 calls
    executing, 64 admitted) gets `--load` concurrent VerifyReplay calls for
    `--seconds`; health probes are timed idle and under that load, and the
    calls are counted by outcome (served, refused with RESOURCE_EXHAUSTED);
(b) uploads: validating a small bot (compiled in the limited child
    interpreter) against a bare in-process ``compile()`` of the same source,
    and the 200,000-term compile bomb that is now a report instead of a crash;
(c) failed authentication: refusing a limited try (a cache read) against
    checking one password with Django's default hasher (what each try cost
    before it was limited).
"""

from __future__ import annotations

import argparse
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
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")

import django  # noqa: E402
import grpc  # noqa: E402
from tqdm import tqdm  # noqa: E402

django.setup()

from django.contrib.auth.hashers import check_password, make_password  # noqa: E402

from digdown.healthcheck import status  # noqa: E402
from digdown.v1 import engine_pb2, engine_pb2_grpc, game_pb2  # noqa: E402
from ladder.accounts import auth_limits  # noqa: E402
from ladder.bots.uploads import validate_upload  # noqa: E402
from tests.support.flood import flood  # noqa: E402
from tests.support.processes import start_engine  # noqa: E402

GOOD = b"import random\n\n\ndef act(observation, legal):\n    return random.choice(legal)\n" * 20


def ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def timed(fn: Any, n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        out.append(time.perf_counter() - started)
    return out


def summary(samples: list[float]) -> dict[str, float]:
    samples = sorted(samples)
    return {
        "p50_ms": ms(statistics.median(samples)),
        "p95_ms": ms(samples[int(0.95 * (len(samples) - 1))]),
        "max_ms": ms(samples[-1]),
        "n": len(samples),
    }


def a_replay(stub: Any) -> game_pb2.Replay:
    game = stub.NewGame(
        engine_pb2.NewGameRequest(
            config=game_pb2.GameConfig(seed=7, num_seats=4, difficulty="hardcore")
        ),
        timeout=10,
    )
    reply: Any = game
    while reply.WhichOneof("next") == "decision":
        d = reply.decision
        reply = stub.Step(
            engine_pb2.StepRequest(
                game_id=game.game_id,
                control_token=game.control_token,
                seat=d.seat,
                action=d.default_action,
            ),
            timeout=10,
        )
    return stub.GetReplay(
        engine_pb2.GetReplayRequest(game_id=game.game_id, control_token=game.control_token),
        timeout=10,
    ).replay


def health_under_load(load: int, seconds: float, engine_args: list[str]) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="security-bench-"))
    engine = start_engine(tmp, "engine", *engine_args)
    probe_channel = grpc.insecure_channel(engine.address)
    channels = [grpc.insecure_channel(engine.address) for _ in range(4)]
    try:
        stubs = [engine_pb2_grpc.EngineStub(c) for c in channels]
        request = engine_pb2.VerifyReplayRequest(replay=a_replay(stubs[0]))

        def probe() -> None:
            assert status(probe_channel, "digdown.v1.Engine", 10.0) == 1

        idle = timed(probe, 50)

        def verify(n: int) -> grpc.Future:
            return stubs[n % 4].VerifyReplay.future(request, timeout=60)

        with flood(verify, in_flight=load) as outcomes:
            time.sleep(0.5)  # let the load build up
            loaded: list[float] = []
            deadline = time.monotonic() + seconds
            with tqdm(desc="health probes under load", unit="probe", leave=False) as bar:
                while time.monotonic() < deadline:
                    loaded += timed(probe, 1)
                    bar.update()
                    time.sleep(0.05)
    finally:
        for c in (*channels, probe_channel):
            c.close()
        engine.stop()
    total = sum(outcomes.values())
    return {
        "concurrent_calls": load,
        "probe_idle": summary(idle),
        "probe_under_load": summary(loaded),
        "probes_failed": 0,  # a failed probe raises above
        "verify_calls": dict(outcomes),
        "verify_served_per_s": round(outcomes["ok"] / (seconds + 0.5), 1),
        "refused_share": round(outcomes["RESOURCE_EXHAUSTED"] / total, 3) if total else 0.0,
    }


def uploads() -> dict[str, Any]:
    source = GOOD.decode()
    bare = timed(lambda: compile(source, "bot.py", "exec", dont_inherit=True), 50)
    child = timed(lambda: validate_upload(filename="bot.py", data=GOOD), 20)
    bomb = b"x = " + b"1+" * 200_000 + b"1\n"
    started = time.perf_counter()
    report = validate_upload(filename="bomb.py", data=bomb)
    return {
        "bare_compile": summary(bare),
        "validate_in_limited_child": summary(child),
        "overhead_ratio_p50": round(statistics.median(child) / statistics.median(bare), 1),
        "compile_bomb_ms": ms(time.perf_counter() - started),
        "compile_bomb_report": report.errors,
    }


def failed_auth() -> dict[str, Any]:
    encoded = make_password("correct horse battery staple")
    hashed = timed(lambda: check_password("wrong guess", encoded), 5)
    address = "203.0.113.9"
    for _ in range(40):
        auth_limits.auth_failed(address=address)

    def refuse() -> None:
        try:
            auth_limits.auth_check(address=address)
        except auth_limits.TooManyFailures:
            return
        raise AssertionError("not limited")

    refused = timed(refuse, 1000)
    return {
        "password_check_with_default_hasher": summary(hashed),
        "limited_try_refused": summary(refused),
        "ratio_p50": round(statistics.median(hashed) / statistics.median(refused)),
        "cache": django.conf.settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1],
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--load", type=int, default=200, help="concurrent VerifyReplay calls")
    p.add_argument("--seconds", type=float, default=5.0, help="how long to probe under load")
    p.add_argument(
        "--engine-arg", action="append", default=[], help="passed to engine.server (repeatable)"
    )
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    figures = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "engine_args": args.engine_arg,
        "health": health_under_load(args.load, args.seconds, args.engine_arg),
        "uploads": uploads(),
        "failed_auth": failed_auth(),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    h, u, a = figures["health"], figures["uploads"], figures["failed_auth"]
    print(f"machine: {figures['machine']}")
    print(
        f"(a) health probe p50/p95/max: idle {h['probe_idle']['p50_ms']}/"
        f"{h['probe_idle']['p95_ms']}/{h['probe_idle']['max_ms']} ms; under "
        f"{h['concurrent_calls']} concurrent VerifyReplay {h['probe_under_load']['p50_ms']}/"
        f"{h['probe_under_load']['p95_ms']}/{h['probe_under_load']['max_ms']} ms "
        f"({h['probe_under_load']['n']} probes, all SERVING); calls {h['verify_calls']}, "
        f"{h['verify_served_per_s']} served/s, {h['refused_share']:.0%} refused at once"
    )
    print(
        f"(b) upload validation p50 {u['validate_in_limited_child']['p50_ms']} ms in the limited "
        f"child vs bare compile {u['bare_compile']['p50_ms']} ms ({u['overhead_ratio_p50']}x); "
        f"200,000-term bomb: {u['compile_bomb_ms']} ms -> {u['compile_bomb_report']}"
    )
    print(
        f"(c) a limited try is refused in {a['limited_try_refused']['p50_ms']} ms "
        f"({a['cache']}) vs {a['password_check_with_default_hasher']['p50_ms']} ms for one "
        f"password check: {a['ratio_p50']}x cheaper"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
