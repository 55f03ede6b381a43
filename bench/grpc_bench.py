"""What the gRPC protocol costs per decision, against in-process play and a bare-gRPC floor.

    .venv/bin/python bench/grpc_bench.py [--games 20] [--json]

Not a test. The same 4-seat normal random matches (same seeds) are played

(a) in-process: engine.rules + engine.players.RandomPlayer, as engine.simulate does;
(b) over gRPC on loopback: `engine.server` and four `examples.random_bot` processes,
    driven by `workers.runner.run_match` (handshakes, NewGame, one Act + one Step
    per decision, GetReplay, CloseGame included);
(b0) the same with the engine converting through json_format (ParseDict /
    MessageToDict, what digdown.wire did before digdown.proto_codec), for a
    before/after ratio measured in the same run;

and the floor is measured in the same run: a bare unary gRPC echo service
(generic handlers, no proto) in its own process, called with messages of the
sizes (b) really sends, times the 2 round-trips a decision needs (Act, Step),
before and after the matches (their mean is the floor; both are reported).
A breakdown of the per-decision work (observation dict, dict -> proto,
serialization, proto -> dict in the SDK; digdown.wire's converters and
json_format's) says what dominates the gap.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent import futures
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402

from digdown import wire  # noqa: E402
from digdown.proto_codec import (  # noqa: E402
    dict_to_message,
    message_to_dict,
    reference_dict_to_message,
    reference_message_to_dict,
)
from digdown.v1 import bot_pb2, engine_pb2, game_pb2  # noqa: E402
from engine.players import RandomPlayer  # noqa: E402
from engine.rules import Action, GameConfig, new_game  # noqa: E402
from engine.simulate import play_out  # noqa: E402
from workers.runner import TimeControl, run_match  # noqa: E402

ECHO_SERVICE = "bench.Echo"


# --- (a) in-process -----------------------------------------------------------------


def _rates(decisions: int, elapsed: float) -> dict[str, Any]:
    """The figures every loop reports, computed one way so they compare."""
    return {
        "decisions": decisions,
        "seconds": elapsed,
        "per_s": decisions / elapsed,
        "us_per_decision": elapsed / decisions * 1e6,
    }


def in_process(seeds: list[int]) -> dict[str, Any]:
    decisions = 0
    started = time.perf_counter()
    for seed in seeds:
        state = new_game(GameConfig(seed=seed, num_seats=4, difficulty="normal"))
        bots = [RandomPlayer(random.Random(seed * 10 + i)) for i in range(4)]
        decisions += play_out(state, lambda seat, obs, legal, b=bots: b[seat].act(obs, legal))[1]
    return _rates(decisions, time.perf_counter() - started)


# --- processes ------------------------------------------------------------------------


def start(args: list[str], tmp: Path, name: str) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server process on port 0; wait (bounded) for its port file."""
    port_file = tmp / f"{name}.port"
    proc = subprocess.Popen(
        [sys.executable, *args, "--listen", "127.0.0.1:0", "--port-file", str(port_file)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    deadline = time.monotonic() + 20
    while not port_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"{name} did not start")
        time.sleep(0.02)
    return proc, f"127.0.0.1:{int(port_file.read_text())}"


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)


# --- (b) over gRPC --------------------------------------------------------------------


def over_grpc(seeds: list[int], engine: str, bots: list[str]) -> dict[str, Any]:
    tc = TimeControl(decision_s=5.0, bank_s=30.0)
    decisions = 0
    think_s = 0.0
    run_match(engine, bots, seed=10**6, time_control=tc)  # warm-up (imports, connections)
    started = time.perf_counter()
    for seed in seeds:
        outcome = run_match(engine, bots, seed=seed, time_control=tc)
        decisions += outcome.decisions
        think_s += sum(s["think_s"] for s in outcome.seats)
    elapsed = time.perf_counter() - started
    return {
        **_rates(decisions, elapsed),
        "act_share": think_s / elapsed,
    }


# --- message sizes of (b) ---------------------------------------------------------------


def message_sizes(seeds: list[int]) -> dict[str, float]:
    """Mean serialized sizes of what (b) sends per decision, rebuilt in-process."""
    req, resp = [], []
    for seed in seeds[:5]:
        state = new_game(GameConfig(seed=seed, num_seats=4, difficulty="normal"))
        rng = random.Random(seed)
        pending: list[dict[str, Any]] = []
        while not state.is_over:
            legal = state.legal_actions()
            if len(legal) == 1:
                pending.extend(state.apply_forced())
                continue
            seat = state.acting_seat
            decision = engine_pb2.Decision(
                seat=seat,
                observation=wire.observation_to_proto(state.observation(seat)),
                legal_actions=wire.actions_to_proto(legal),
                default_action=wire.action_to_proto(state.default_action()),
            )
            resp.append(
                engine_pb2.StepResponse(
                    events=wire.events_to_proto(pending), decision=decision
                ).ByteSize()
            )
            req.append(
                bot_pb2.DecisionRequest(
                    game_id="x" * 36,
                    seat=seat,
                    observation=decision.observation,
                    legal_actions=decision.legal_actions,
                    events=wire.events_to_proto(pending),
                ).ByteSize()
            )
            pending = list(state.apply(legal[rng.randrange(len(legal))]))
    return {
        "decision_request": statistics.mean(req),
        "step_response": statistics.mean(resp),
        "act_reply": 8.0,
        "step_request": 60.0,
    }


# --- floor: bare gRPC echo ---------------------------------------------------------------


def echo_server_main(listen: str, port_file: str) -> None:
    """A unary service on generic handlers: the request says how many bytes to answer."""
    blobs: dict[int, bytes] = {}

    def echo(request: bytes, context: Any) -> bytes:
        n = int.from_bytes(request[:4], "little")
        blob = blobs.get(n)
        if blob is None:
            blob = blobs[n] = b"x" * n
        return blob

    server = grpc.server(futures.ThreadPoolExecutor(4), options=[("grpc.so_reuseport", 0)])
    handler = grpc.method_handlers_generic_handler(
        ECHO_SERVICE, {"Echo": grpc.unary_unary_rpc_method_handler(echo)}
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port(listen)
    server.start()
    Path(port_file).write_text(f"{port}\n")
    signal.signal(signal.SIGTERM, lambda *_: server.stop(0))
    server.wait_for_termination()


def echo_floor(address: str, sizes: dict[str, float], n: int) -> dict[str, float]:
    """µs per decision for Act-sized + Step-sized round trips on a bare unary channel."""
    channel = grpc.insecure_channel(address)
    call: Callable[..., bytes] = channel.unary_unary(f"/{ECHO_SERVICE}/Echo")

    def trip(req_bytes: float, resp_bytes: float) -> float:
        payload = int(resp_bytes).to_bytes(4, "little") + b"y" * max(0, int(req_bytes) - 4)
        for _ in range(50):
            call(payload, timeout=5)
        t = time.perf_counter()
        for _ in range(n):
            call(payload, timeout=5)
        return (time.perf_counter() - t) / n * 1e6

    act = trip(sizes["decision_request"], sizes["act_reply"])
    step = trip(sizes["step_request"], sizes["step_response"])
    tiny = trip(8, 8)
    channel.close()
    return {
        "act_like_us": act,
        "step_like_us": step,
        "tiny_us": tiny,
        "floor_us_per_decision": act + step,
    }


# --- breakdown ----------------------------------------------------------------------------


def breakdown(seeds: list[int]) -> dict[str, float]:
    """Mean µs of each piece of per-decision work (b) adds, measured on real states."""
    samples: dict[str, list[float]] = {
        k: []
        for k in (
            "observation_dict",
            "observation_to_proto (proto_codec)",
            "observation_to_proto (json_format)",
            "legal_to_proto",
            "serialize_request",
            "parse_request",
            "events_to_proto (wire, per decision)",
            "events_to_proto (json_format)",
            "observation_from_proto (proto_codec)",
            "observation_from_proto (json_format)",
            "legal_from_proto (SDK)",
        )
    }

    def timed(key: str, fn: Callable[[], Any]) -> Any:
        t = time.perf_counter()
        out = fn()
        samples[key].append((time.perf_counter() - t) * 1e6)
        return out

    for seed in seeds[:3]:
        state = new_game(GameConfig(seed=seed, num_seats=4, difficulty="normal"))
        rng = random.Random(seed)
        while not state.is_over:
            legal = state.legal_actions()
            if len(legal) == 1:
                state.apply_forced()
                continue
            seat = state.acting_seat
            obs = timed("observation_dict", lambda s=seat, st=state: st.observation(s))
            obs_pb = timed(
                "observation_to_proto (proto_codec)",
                lambda o=obs: dict_to_message(o, game_pb2.Observation),
            )
            ref_pb = timed(
                "observation_to_proto (json_format)",
                lambda o=obs: reference_dict_to_message(o, game_pb2.Observation),
            )
            assert obs_pb == ref_pb
            legal_pb = timed("legal_to_proto", lambda lg=legal: wire.actions_to_proto(lg))
            req = bot_pb2.DecisionRequest(observation=obs_pb, legal_actions=legal_pb)
            raw = timed("serialize_request", req.SerializeToString)
            parsed = timed("parse_request", lambda r=raw: bot_pb2.DecisionRequest.FromString(r))
            fast = timed(
                "observation_from_proto (proto_codec)",
                lambda p=parsed: message_to_dict(p.observation),
            )
            ref = timed(
                "observation_from_proto (json_format)",
                lambda p=parsed: reference_message_to_dict(p.observation),
            )
            assert fast == ref == obs
            timed(
                "legal_from_proto (SDK)",
                lambda p=parsed: [
                    Action.from_dict(wire.action_from_proto(a)) for a in p.legal_actions
                ],
            )
            events = state.apply(legal[rng.randrange(len(legal))])
            timed("events_to_proto (wire, per decision)", lambda e=events: wire.events_to_proto(e))
            timed(
                "events_to_proto (json_format)",
                lambda e=events: [reference_dict_to_message(x, game_pb2.Event) for x in e],
            )
    return {k: statistics.mean(v) for k, v in samples.items()}


def machine() -> dict[str, Any]:
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "grpcio": grpc.__version__,
        "platform": platform.platform(),
    }


def json_format_engine_main(argv: list[str]) -> int:
    """engine.server with digdown.wire's converters swapped for json_format's (the old wire)."""
    from engine import server

    # wire.parse / wire.to_dict look these names up at call time.
    wire.dict_to_message = reference_dict_to_message  # type: ignore[assignment]
    wire.message_to_dict = reference_message_to_dict
    return server.main(argv)


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--echo-server":
        echo_server_main(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "--json-format-engine":
        return json_format_engine_main(sys.argv[2:])
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--echo-calls", type=int, default=2000)
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    seeds = list(range(1, args.games + 1))
    report: dict[str, Any] = {"machine": machine(), "games": args.games}
    report["in_process"] = in_process(seeds)
    report["sizes_bytes"] = sizes = message_sizes(seeds)
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            # The floor is measured before and after the matches (the echo server
            # idles meanwhile): a machine shared with other work drifts, and the
            # two figures show by how much.
            procs.append(
                subprocess.Popen(
                    [sys.executable, __file__, "--echo-server", "127.0.0.1:0", f"{tmp}/echo.port"]
                )
            )
            deadline = time.monotonic() + 20
            while not (Path(tmp) / "echo.port").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
            echo = f"127.0.0.1:{int((Path(tmp) / 'echo.port').read_text())}"
            floors = [echo_floor(echo, sizes, args.echo_calls)]
            proc, engine = start(["-m", "engine.server", "--log-level", "WARNING"], Path(tmp), "e")
            procs.append(proc)
            bots = []
            for i in range(4):
                proc, addr = start(
                    ["-m", "examples.random_bot", "--seed", str(i), "--log-level", "WARNING"],
                    Path(tmp),
                    f"b{i}",
                )
                procs.append(proc)
                bots.append(addr)
            report["grpc"] = over_grpc(seeds, engine, bots)
            stop(procs[1:2])
            proc, engine = start(
                [__file__, "--json-format-engine", "--log-level", "WARNING"], Path(tmp), "ref-e"
            )
            procs[1] = proc
            report["grpc_json_format_engine"] = over_grpc(seeds, engine, bots)
            floors.append(echo_floor(echo, sizes, args.echo_calls))
        finally:
            stop(procs)
    report["floor"] = {k: statistics.mean(f[k] for f in floors) for k in floors[0]}
    report["floor"]["before_us"] = floors[0]["floor_us_per_decision"]
    report["floor"]["after_us"] = floors[1]["floor_us_per_decision"]
    report["breakdown_us"] = breakdown(seeds)
    g, a, f = report["grpc"], report["in_process"], report["floor"]
    report["summary"] = {
        "in_process_decisions_per_s": round(a["per_s"]),
        "grpc_decisions_per_s": round(g["per_s"]),
        "grpc_us_per_decision": round(g["us_per_decision"]),
        "grpc_overhead_us_per_decision": round(g["us_per_decision"] - a["us_per_decision"]),
        "floor_us_per_decision": round(f["floor_us_per_decision"]),
        "ratio_to_floor": round(g["us_per_decision"] / f["floor_us_per_decision"], 2),
        "json_format_engine_us_per_decision": round(
            report["grpc_json_format_engine"]["us_per_decision"]
        ),
        "json_format_engine_ratio_to_floor": round(
            report["grpc_json_format_engine"]["us_per_decision"] / f["floor_us_per_decision"], 2
        ),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    m = report["machine"]
    print(f"machine: {m['cpu']} x{m['cores']}, Python {m['python']}, grpcio {m['grpcio']}")
    print(f"{args.games} games, 4 seats, normal, random bots")
    print(f"(a) in-process : {a['per_s']:9.0f} decisions/s  {a['us_per_decision']:8.0f} µs each")
    print(
        f"(b) gRPC       : {g['per_s']:9.0f} decisions/s  {g['us_per_decision']:8.0f} µs each"
        f"  (Act calls {g['act_share']:.0%} of the time)"
    )
    print(
        f"    sizes: DecisionRequest {sizes['decision_request']:.0f} B, "
        f"StepResponse {sizes['step_response']:.0f} B"
    )
    print(
        f"floor: Act-sized trip {f['act_like_us']:.0f} µs + Step-sized trip "
        f"{f['step_like_us']:.0f} µs = {f['floor_us_per_decision']:.0f} µs/decision "
        f"(mean of {f['before_us']:.0f} before and {f['after_us']:.0f} after the matches; "
        f"tiny trip {f['tiny_us']:.0f} µs)"
    )
    ref = report["grpc_json_format_engine"]
    print(
        f"(b0) gRPC, engine on json_format (the old wire): {ref['per_s']:.0f} decisions/s, "
        f"{ref['us_per_decision']:.0f} µs each, "
        f"{ref['us_per_decision'] / f['floor_us_per_decision']:.2f}x floor"
    )
    lo, hi = sorted((f["before_us"], f["after_us"]))
    print(
        f"(b) / floor = {report['summary']['ratio_to_floor']} "
        f"({g['us_per_decision'] / hi:.2f}-{g['us_per_decision'] / lo:.2f} against either floor), "
        f"(b0) / (b) = {ref['us_per_decision'] / g['us_per_decision']:.2f}"
    )
    print("per-decision work (µs):")
    for k, v in report["breakdown_us"].items():
        print(f"    {k:38s} {v:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
