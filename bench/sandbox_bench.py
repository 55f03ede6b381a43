"""What the hosted-bot sandbox costs: start-up per seat, and a decision over its unix socket.

    .venv/bin/python bench/sandbox_bench.py [--starts 20] [--decisions 2000] [--json]

Not a test. In one run, on this machine:

start-up per seat (p50, p95), from launch until the bot's health service says SERVING:
  (s1) ``workers.sandbox.hosted_seat``: bubblewrap, boot (uid, limits), the starter bot;
  (s0) the same bot as a plain subprocess on a unix socket (no sandbox): the floor;
  and the bare mechanism: ``python -c pass`` inside the sandbox's bubblewrap vs outside.

a decision (one ``Act`` round trip with a real observation, p50/p95/mean), same bot code
(the random house bot), same requests, rounds interleaved so machine noise hits all alike:
  (d1) hosted: in the sandbox, over its unix socket;
  (d0) remote: a plain process over loopback TCP (how remote bots are dialed);
  (du) a plain process over a unix socket (transport alone, no sandbox).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
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

import grpc  # noqa: E402
from tqdm import tqdm  # noqa: E402

from bench.procs import stop  # noqa: E402
from digdown import wire  # noqa: E402
from digdown.healthcheck import wait_until_serving  # noqa: E402
from digdown.v1 import bot_pb2, bot_pb2_grpc  # noqa: E402
from engine.rules import GameConfig, new_game  # noqa: E402
from examples.hosted_bundle import build  # noqa: E402
from workers.sandbox import Bundle, hosted_seat, sandbox_check  # noqa: E402
from workers.sandbox.launcher import _namespace_args  # noqa: E402
from workers.sandbox.view import runtime_view  # noqa: E402

BOT_SERVICE = "digdown.v1.Bot"


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50, p95 and mean of ``samples`` (seconds), in milliseconds."""
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(samples),
        "p50_ms": statistics.median(ordered) * 1e3,
        "p95_ms": p95 * 1e3,
        "mean_ms": statistics.fmean(ordered) * 1e3,
    }


def bundle(name: str) -> Bundle:
    filename, data = build(name)
    return Bundle(filename, data, "bot.py" if filename.endswith(".zip") else "")


# --- start-up ---------------------------------------------------------------------------


def start_sandboxed(n: int) -> list[float]:
    starter = bundle("starter")
    times = []
    for _ in tqdm(range(n), desc="sandboxed starts", leave=False):
        with hosted_seat(starter) as seat:
            if seat.start_error:
                raise RuntimeError(seat.start_error + seat.log_bytes().decode(errors="replace"))
            times.append(seat.start_s)
    return times


def plain_bot(args: list[str], listen: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, *args, "--listen", listen],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def start_plain(n: int, tmp: Path) -> list[float]:
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")}
    times = []
    for i in tqdm(range(n), desc="plain starts", leave=False):
        address = f"unix:{tmp}/plain-{i}.sock"
        started = time.monotonic()
        proc = plain_bot([str(ROOT / "examples" / "starter_bot.py")], address, env)
        try:
            wait_until_serving(address, BOT_SERVICE, 30.0, alive=lambda p=proc: p.poll() is None)
            times.append(time.monotonic() - started)
        finally:
            stop([proc])
    return times


def bare(n: int) -> dict[str, list[float]]:
    """``python -I -S -c pass`` with and without the sandbox's bubblewrap (mechanism alone)."""
    view = runtime_view()
    inside = [shutil.which("bwrap") or "bwrap", *_namespace_args(), *view.args()]
    runs: dict[str, list[float]] = {"bwrap": [], "plain": []}
    for _ in tqdm(range(n), desc="bare interpreter", leave=False):
        for key, prefix in (("bwrap", inside), ("plain", [])):
            started = time.monotonic()
            subprocess.run([*prefix, view.python, "-I", "-S", "-c", "pass"], check=True, env={})
            runs[key].append(time.monotonic() - started)
    return runs


# --- decisions ----------------------------------------------------------------------------


def requests(count: int) -> list[bot_pb2.DecisionRequest]:
    """Real decision requests of a 4-seat random game, reused in a cycle."""
    state = new_game(GameConfig(seed=7, num_seats=4, difficulty="normal"))
    rng = random.Random(7)
    out = []
    while not state.is_over and len(out) < count:
        legal = state.legal_actions()
        if len(legal) == 1:
            state.apply_forced()
            continue
        seat = state.acting_seat
        out.append(
            bot_pb2.DecisionRequest(
                game_id="bench",
                seat=seat,
                observation=wire.observation_to_proto(state.observation(seat)),
                legal_actions=wire.actions_to_proto(legal),
                deadline_ms=1000,
                time_left_ms=30000,
            )
        )
        state.apply(legal[rng.randrange(len(legal))])
    return out


def decisions(addresses: dict[str, str], n: int) -> dict[str, list[float]]:
    reqs = requests(200)
    channels = {k: grpc.insecure_channel(a) for k, a in addresses.items()}
    stubs = {k: bot_pb2_grpc.BotStub(c) for k, c in channels.items()}
    times: dict[str, list[float]] = {k: [] for k in addresses}
    try:
        for stub in stubs.values():  # warm-up: connect, first calls
            for r in reqs[:20]:
                stub.Act(r, timeout=10)
        for i in tqdm(range(n), desc="decisions", leave=False):
            r = reqs[i % len(reqs)]
            for key, stub in stubs.items():
                started = time.perf_counter()
                stub.Act(r, timeout=10)
                times[key].append(time.perf_counter() - started)
    finally:
        for c in channels.values():
            c.close()
    return times


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--starts", type=int, default=20)
    p.add_argument("--decisions", type=int, default=2000)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    reason = sandbox_check()
    if reason:
        print(f"no sandbox on this machine: {reason}", file=sys.stderr)
        return 2
    report: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "loadavg_before": os.getloadavg(),
    }
    with tempfile.TemporaryDirectory(prefix="digdown-bench-") as tmp_name:
        tmp = Path(tmp_name)
        sandboxed, plain = start_sandboxed(args.starts), start_plain(args.starts, tmp)
        mechanism = bare(args.starts)
        report["start"] = {
            "sandboxed": percentiles(sandboxed),
            "plain": percentiles(plain),
            "bare_bwrap": percentiles(mechanism["bwrap"]),
            "bare_plain": percentiles(mechanism["plain"]),
        }
        random_bot = bundle("random")
        env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")}
        tcp_port = tmp / "tcp.port"
        house_random = ["-m", "examples.random_bot"]
        procs = [
            plain_bot([*house_random, "--port-file", str(tcp_port)], "127.0.0.1:0", env),
            plain_bot(house_random, f"unix:{tmp}/unix.sock", env),
        ]
        try:
            with hosted_seat(random_bot) as seat:
                if seat.start_error:
                    raise RuntimeError(seat.start_error)
                deadline = time.monotonic() + 30
                while not tcp_port.exists() and time.monotonic() < deadline:
                    time.sleep(0.02)
                addresses = {
                    "hosted_unix": seat.address,
                    "remote_tcp": f"127.0.0.1:{int(tcp_port.read_text())}",
                    "plain_unix": f"unix:{tmp}/unix.sock",
                }
                for a in addresses.values():
                    wait_until_serving(a, BOT_SERVICE, 30.0)
                times = decisions(addresses, args.decisions)
        finally:
            stop(procs)
    report["decision"] = {k: percentiles(v) for k, v in times.items()}
    report["ratios"] = {
        "start_sandboxed_over_plain_p50": report["start"]["sandboxed"]["p50_ms"]
        / report["start"]["plain"]["p50_ms"],
        "decision_hosted_unix_over_remote_tcp_p50": report["decision"]["hosted_unix"]["p50_ms"]
        / report["decision"]["remote_tcp"]["p50_ms"],
        "decision_plain_unix_over_remote_tcp_p50": report["decision"]["plain_unix"]["p50_ms"]
        / report["decision"]["remote_tcp"]["p50_ms"],
    }
    report["loadavg_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    load = f"{report['loadavg_before'][0]:.2f} -> {report['loadavg_after'][0]:.2f}"
    print(f"machine: {report['machine']}, load average (1 min) {load}")
    print("start-up per seat, launch -> SERVING (ms):")
    for key, row in report["start"].items():
        print(f"  {key:<12} p50 {row['p50_ms']:8.1f}  p95 {row['p95_ms']:8.1f}  (n={row['n']})")
    print("one Act round trip with a real observation (ms):")
    for key, row in report["decision"].items():
        print(
            f"  {key:<12} p50 {row['p50_ms']:8.3f}  p95 {row['p95_ms']:8.3f}  "
            f"mean {row['mean_ms']:8.3f}  (n={row['n']})"
        )
    for key, value in report["ratios"].items():
        print(f"  {key}: {value:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
