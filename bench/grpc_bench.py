"""What the gRPC protocol costs per decision, unary and streamed, against in-process play
and bare-gRPC floors of both.

    .venv/bin/python bench/grpc_bench.py [--games 20] [--json]

Not a test. The same 4-seat normal random matches (same seeds) are played

(a) in-process: engine.rules + engine.players.RandomPlayer, as engine.simulate does;
(b) over gRPC on loopback, protocol 1 (unary): `engine.server` and four
    `examples.random_bot` processes, driven by `workers.runner.run_match`
    (handshakes, NewGame, one Act + one Step call per decision, GetReplay,
    CloseGame included);
(s) the same over streams (protocol 2): one ActStream per seat, one Play stream
    per game; (b) and (s) alternate game by game, so both see the same load;
(h) and (hu): the bots served on unix sockets, as hosted bots are (sandboxed
    bots listen on a socket in their seat directory), streamed and unary;
(b0) (b) with the engine converting through json_format (ParseDict /
    MessageToDict, what digdown.wire did before digdown.proto_codec), for a
    before/after ratio measured in the same run;

and the floors are measured in the same run, in short bursts before, between
and after the rounds of matches (so they see the load the matches see; the
mean over the bursts is the floor, the first and last are reported beside it):
a bare gRPC echo service (generic
handlers, no proto) in its own process, with messages of the sizes the matches
really send, times the 2 exchanges a decision needs (the bot's, the engine's):
as unary calls (the floor of (b)), over two open streams (the floor of (s): the
cheapest of four ways, the runner's single-threaded calls or grpcio's blocking
stream API to the thread-pool server, the runner's calls to a grpc.aio echo
server or to an echo served as the engine and the bots serve their game streams,
digdown.stream_server), and with the bot's exchange on a unix socket (the floor
of (h)). A breakdown of
the per-decision work (observation dict, dict -> proto, serialization, proto ->
dict in the SDK; digdown.wire's converters and json_format's) says what
dominates the gap.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
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
# This process runs matches as a worker does: grpc's I/O chosen before grpc's import.
import digdown.game_io  # noqa: E402  # isort: skip

import grpc  # noqa: E402

from bench.procs import stop  # noqa: E402
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
from workers.runner import EnginePool, TimeControl, run_match  # noqa: E402
from workers.runner.streams import CallStream  # noqa: E402

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


def start(
    args: list[str], tmp: Path, name: str, *, unix: bool = False
) -> tuple[subprocess.Popen[bytes], str]:
    """Start a server process on port 0 (or a unix socket); wait (bounded) for its port file."""
    port_file = tmp / f"{name}.port"
    listen = f"unix:{tmp}/{name}.sock" if unix else "127.0.0.1:0"
    proc = subprocess.Popen(
        [sys.executable, *args, "--listen", listen, "--port-file", str(port_file)],
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
    return proc, listen if unix else f"127.0.0.1:{int(port_file.read_text())}"


# --- (b) over gRPC --------------------------------------------------------------------


def cpu_s(pid: int) -> float:
    """CPU seconds a process's threads used so far (Linux /proc), in nanoseconds' resolution:
    the sum of each live thread's ``schedstat`` (the tick counts of ``/proc/<pid>/stat``
    move in 10 ms steps, too coarse for a few hundred µs per decision). A thread that
    ended takes its time with it; the servers' pool threads live as long as they do."""
    total = 0
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                total += int((task / "schedstat").read_text().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    except OSError:
        return 0.0
    return total / 1e9


def over_grpc(
    seeds: list[int],
    engine: str,
    runs: dict[str, tuple[list[str], bool]],
    pids: dict[str, tuple[int, list[int]]] | None = None,
    between: Callable[[], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Play every seed once per run (``name -> (bot addresses, streams)``), alternating
    the runs game by game so that each sees the same load; their figures by name.

    With ``pids`` (``name -> (engine pid, bot pids)``), also where the CPU went per
    decision: this process (the runner), the engine, the bots — every thread, gRPC's
    own included. ``between`` is called after each seed's round (the floors' bursts).

    One engine pool serves every match, as a worker's does: its channel is made once."""
    pool = EnginePool(engine)
    tcs = {
        name: TimeControl(decision_s=5.0, bank_s=30.0, streams=streams)
        for name, (_, streams) in runs.items()
    }
    keys = ("decisions", "seconds", "think_s", "runner_cpu", "engine_cpu", "bots_cpu")
    totals = {name: dict.fromkeys(keys, 0.0) for name in runs}
    for name, (bots, _) in runs.items():  # warm-up (imports, connections)
        run_match(pool, bots, seed=10**6, time_control=tcs[name])

    def cpu(name: str, *, runner_last: bool) -> tuple[float, float, float]:
        """The CPU seconds so far of the runner (this process), the engine and the bots.
        Reading the others' /proc files costs this process CPU too: the runner's clock is
        read after them at the start of a match and before them at its end, so that
        cost is never charged to the runner's decisions."""
        engine_pid, bot_pids = (pids or {}).get(name, (0, []))
        runner = 0.0 if runner_last else time.process_time()
        others = (cpu_s(engine_pid) if engine_pid else 0.0, sum(cpu_s(p) for p in bot_pids))
        if runner_last:
            runner = time.process_time()
        return (runner, *others)

    for seed in seeds:
        for name, (bots, _) in runs.items():
            before = cpu(name, runner_last=True)
            started = time.perf_counter()
            outcome = run_match(pool, bots, seed=seed, time_control=tcs[name])
            total = totals[name]
            total["seconds"] += time.perf_counter() - started
            after = cpu(name, runner_last=False)
            for key, b, a in zip(
                ("runner_cpu", "engine_cpu", "bots_cpu"), before, after, strict=True
            ):
                total[key] += a - b
            total["decisions"] += outcome.decisions
            total["think_s"] += sum(s["think_s"] for s in outcome.seats)
            wanted = 2 if tcs[name].streams else 1
            assert all(s["protocol_version"] == wanted for s in outcome.seats), outcome.seats
        if between is not None:
            between()
    pool.close()
    report = {}
    for name, t in totals.items():
        n = t["decisions"]
        report[name] = {
            **_rates(int(n), t["seconds"]),
            "act_share": t["think_s"] / t["seconds"],
        }
        if pids:
            report[name]["cpu_us_per_decision"] = {
                part: t[f"{part}_cpu"] / n * 1e6 for part in ("runner", "engine", "bots")
            }
    return report


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


def echo_answer() -> Callable[[bytes], bytes]:
    """The echo floors' answer: as many bytes as the request's first four say (each size
    made once, so the echo does no work per message)."""
    blobs: dict[int, bytes] = {}

    def answer(request: bytes) -> bytes:
        n = int.from_bytes(request[:4], "little")
        blob = blobs.get(n)
        if blob is None:
            blob = blobs[n] = b"x" * n
        return blob

    return answer


def port_file_write(port_file: str, port: int) -> None:
    tmp = Path(f"{port_file}.tmp")  # renamed: the reader never sees an empty file
    tmp.write_text(f"{port}\n")
    tmp.replace(port_file)


def echo_server_main(listen: str, port_file: str) -> None:
    """Unary and streamed echo on generic handlers, on ``listen`` and a unix socket beside
    the port file: the request says how many bytes to answer."""
    answer = echo_answer()

    def echo(request: bytes, context: Any) -> Any:
        return answer(request)

    def echo_stream(requests: Any, context: Any) -> Any:
        for request in requests:
            yield answer(request)

    # Every open stream holds a thread (8 of them stay open), and the unary calls need more.
    server = grpc.server(futures.ThreadPoolExecutor(16), options=[("grpc.so_reuseport", 0)])
    handler = grpc.method_handlers_generic_handler(
        ECHO_SERVICE,
        {
            "Echo": grpc.unary_unary_rpc_method_handler(echo),
            "EchoStream": grpc.stream_stream_rpc_method_handler(echo_stream),
        },
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port(listen)
    server.add_insecure_port(f"unix:{port_file}.sock")
    server.start()
    port_file_write(port_file, port)
    signal.signal(signal.SIGTERM, lambda *_: server.stop(0))
    server.wait_for_termination()


def exchange_echo_server_main(listen: str, port_file: str) -> None:
    """The streamed echo of `echo_server_main` served as the engine and the bots serve
    their game streams (digdown.stream_server: the stream's own thread drives its call,
    one wake-up per message); a floor kind of its own."""
    from digdown.stream_server import StreamServer

    answer = echo_answer()

    def echo_stream(requests: Any, context: Any) -> Any:
        for request in requests:
            yield answer(request)

    server = grpc.server(futures.ThreadPoolExecutor(4), options=[("grpc.so_reuseport", 0)])
    server.add_registered_method_handlers(  # type: ignore[attr-defined]
        ECHO_SERVICE, {"EchoStream": grpc.stream_stream_rpc_method_handler(echo_stream)}
    )
    streams = StreamServer(server, [f"/{ECHO_SERVICE}/EchoStream"], [], threads=16)
    port = server.add_insecure_port(listen)
    server.add_insecure_port(f"unix:{port_file}.sock")
    server.start()
    streams.start()
    port_file_write(port_file, port)
    signal.signal(signal.SIGTERM, lambda *_: server.stop(0))
    server.wait_for_termination()


def aio_echo_server_main(listen: str, port_file: str) -> None:
    """The streamed echo of `echo_server_main` on a grpc.aio server: each message is
    handled on the server's asyncio loop (no hand-over to a stream's thread), the
    server model grpcio offers besides the thread-pool one; a floor kind of its own."""
    import asyncio

    answer = echo_answer()

    async def echo_stream(requests: Any, context: Any) -> Any:
        async for request in requests:
            yield answer(request)

    async def serve() -> None:
        server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
        handler = grpc.method_handlers_generic_handler(
            ECHO_SERVICE, {"EchoStream": grpc.stream_stream_rpc_method_handler(echo_stream)}
        )
        server.add_generic_rpc_handlers((handler,))
        port = server.add_insecure_port(listen)
        server.add_insecure_port(f"unix:{port_file}.sock")
        await server.start()
        port_file_write(port_file, port)
        stopped = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stopped.set)
        await stopped.wait()
        await server.stop(0)

    asyncio.run(serve())


def _payload(req_bytes: float, resp_bytes: float) -> bytes:
    return int(resp_bytes).to_bytes(4, "little") + b"y" * max(0, int(req_bytes) - 4)


class FloorMeter:
    """The echo floors, measured in bursts between the matches on channels and streams
    opened once (as the runner keeps its own): each burst times ``n`` decisions' worth
    of exchanges of the real sizes, the bot-sized one then the engine-sized one, in
    turn as a match makes them, for each way of calling (unary, streams, the bot's
    exchange on a unix socket). Streams are measured two ways, and the floor is the
    better of the two (the best streaming echo this grpcio offers a blocking caller):
    the runner's ``CallStream`` (the calling thread drives the call's own completion
    queue) and grpcio's blocking stream API (the request put on the request
    iterator's queue, the reply read with ``next``: two more threads per exchange),
    against the thread-pool echo server, and the ``CallStream`` against a grpc.aio
    echo server (``aio``: messages handled on its asyncio loop) and against an echo
    served as the game streams are (``exchange``: digdown.stream_server). The floor
    is the best of the four (the best streaming echo this grpcio offers); a grpc.aio
    *client* was measured too (driven from a thread and natively) and costs more than
    either client here."""

    KINDS = (
        "unary",
        "stream",
        "unix_stream",
        "unix_unary",
        "threaded_stream",
        "threaded_unix_stream",
        "aio_stream",
        "aio_unix_stream",
        "exchange_stream",
        "exchange_unix_stream",
    )
    # Each streaming kind with its bot-on-a-unix-socket counterpart, and what it is.
    STREAM_KINDS = {
        "stream": ("unix_stream", "single-threaded calls (the runner's CallStream)"),
        "threaded_stream": (
            "threaded_unix_stream",
            "grpcio's blocking stream API (request-iterator thread)",
        ),
        "aio_stream": (
            "aio_unix_stream",
            "single-threaded calls (the runner's CallStream) to a grpc.aio echo server",
        ),
        "exchange_stream": (
            "exchange_unix_stream",
            "single-threaded calls (the runner's CallStream) to an echo served as the game "
            "streams are (digdown.stream_server)",
        ),
    }

    def __init__(
        self,
        address: str,
        unix: str,
        sizes: dict[str, float],
        aio: tuple[str, str],
        exchange: tuple[str, str],
    ) -> None:
        self.channels = [grpc.insecure_channel(address), grpc.insecure_channel(unix)]
        self.channels += [grpc.insecure_channel(a) for a in (*aio, *exchange)]
        tcp, local, aio_tcp, aio_local, ex_tcp, ex_local = self.channels
        self.act_payload = _payload(sizes["decision_request"], sizes["act_reply"])
        self.step_payload = _payload(sizes["step_request"], sizes["step_response"])
        self.tiny_payload = _payload(8, 8)
        self.queues: list[queue.SimpleQueue[Any]] = []
        self.streams: list[CallStream] = []
        unary = {ch: ch.unary_unary(f"/{ECHO_SERVICE}/Echo") for ch in self.channels}

        def threaded(channel: grpc.Channel) -> Callable[[bytes], bytes]:
            requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
            self.queues.append(requests)
            replies = channel.stream_stream(f"/{ECHO_SERVICE}/EchoStream")(iter(requests.get, None))

            def exchange(payload: bytes) -> bytes:
                requests.put(payload)
                reply: bytes = next(replies)
                return reply

            return exchange

        def stream(channel: grpc.Channel) -> Callable[[bytes], bytes]:
            opened = CallStream(channel.stream_stream(f"/{ECHO_SERVICE}/EchoStream"))
            self.streams.append(opened)
            return lambda payload: opened.ask(payload, 5.0)

        def call(channel: grpc.Channel) -> Callable[[bytes], bytes]:
            method = unary[channel]
            return lambda payload: method(payload, timeout=5)

        # kind -> (the bot's exchange, the engine's exchange)
        self.trips: dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]] = {
            "unary": (call(tcp), call(tcp)),
            "stream": (stream(tcp), stream(tcp)),
            "unix_stream": (stream(local), stream(tcp)),
            "unix_unary": (call(local), call(tcp)),
            "threaded_stream": (threaded(tcp), threaded(tcp)),
            "threaded_unix_stream": (threaded(local), threaded(tcp)),
            "aio_stream": (stream(aio_tcp), stream(aio_tcp)),
            "aio_unix_stream": (stream(aio_local), stream(aio_tcp)),
            "exchange_stream": (stream(ex_tcp), stream(ex_tcp)),
            "exchange_unix_stream": (stream(ex_local), stream(ex_tcp)),
        }
        self.tiny = call(tcp)
        self.sums = {f"{k}_{part}": 0.0 for k in self.KINDS for part in ("act", "step")}
        self.sums["tiny"] = 0.0
        self.count = 0
        self.bursts: list[dict[str, float]] = []  # per burst: kind -> µs per decision
        self.burst(50, record=False)  # warm-up: connections, threads

    def burst(self, n: int, *, record: bool = True) -> None:
        perf = time.perf_counter
        this: dict[str, float] = {}
        for kind, (act, step) in self.trips.items():
            act_s = step_s = 0.0
            for _ in range(n):
                t0 = perf()
                act(self.act_payload)
                t1 = perf()
                step(self.step_payload)
                t2 = perf()
                act_s += t1 - t0
                step_s += t2 - t1
            if record:
                self.sums[f"{kind}_act"] += act_s
                self.sums[f"{kind}_step"] += step_s
                this[kind] = (act_s + step_s) / n * 1e6
        t = perf()
        for _ in range(n):
            self.tiny(self.tiny_payload)
        if record:
            self.sums["tiny"] += perf() - t
            self.count += n
            self.bursts.append(this)

    def close(self) -> None:
        for requests in self.queues:
            requests.put(None)
        for opened in self.streams:
            opened.close()
        for channel in self.channels:
            channel.close()

    def result(self) -> dict[str, float]:
        """µs per decision for a bot-sized + an engine-sized exchange (means over the
        bursts), per way of calling; the first and last bursts' figures beside them."""
        us = {k: v / self.count * 1e6 for k, v in self.sums.items()}
        first, last = self.bursts[0], self.bursts[-1]

        def per_decision(kind: str) -> float:
            return us[f"{kind}_act"] + us[f"{kind}_step"]

        best = min(self.STREAM_KINDS, key=per_decision)
        best_unix, what = self.STREAM_KINDS[best]
        return {
            "stream_floor_kind": what,
            "single_threaded_stream_us_per_decision": per_decision("stream"),
            "threaded_stream_us_per_decision": per_decision("threaded_stream"),
            "threaded_unix_stream_us_per_decision": per_decision("threaded_unix_stream"),
            "aio_server_stream_us_per_decision": per_decision("aio_stream"),
            "aio_server_unix_stream_us_per_decision": per_decision("aio_unix_stream"),
            "exchange_server_stream_us_per_decision": per_decision("exchange_stream"),
            "exchange_server_unix_stream_us_per_decision": per_decision("exchange_unix_stream"),
            "act_like_us": us["unary_act"],
            "step_like_us": us["unary_step"],
            "tiny_us": us["tiny"],
            "floor_us_per_decision": us["unary_act"] + us["unary_step"],
            "act_stream_us": us[f"{best}_act"],
            "step_stream_us": us[f"{best}_step"],
            "stream_floor_us_per_decision": us[f"{best}_act"] + us[f"{best}_step"],
            "act_unix_stream_us": us[f"{best_unix}_act"],
            "unix_stream_floor_us_per_decision": us[f"{best_unix}_act"] + us[f"{best_unix}_step"],
            "act_unix_us": us["unix_unary_act"],
            "unix_floor_us_per_decision": us["unix_unary_act"] + us["unix_unary_step"],
            "bursts": len(self.bursts),
            "before_us": first["unary"],
            "after_us": last["unary"],
            "stream_before_us": first[best],
            "stream_after_us": last[best],
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
        # grpc core's I/O of every process of the run (each chooses it as shipped, and
        # the echo servers inherit it): digdown.game_io; DIGDOWN_GRPC_IO=default for
        # grpc's own. docs/protocol.md has both sets of figures.
        "grpc_io": digdown.game_io.CHOSEN,
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
    if len(sys.argv) == 4 and sys.argv[1] == "--aio-echo-server":
        aio_echo_server_main(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == "--exchange-echo-server":
        exchange_echo_server_main(sys.argv[2], sys.argv[3])
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
    report["load_average"] = list(os.getloadavg())
    report["in_process"] = in_process(seeds)
    report["sizes_bytes"] = sizes = message_sizes(seeds)
    procs: list[subprocess.Popen[bytes]] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            # The floor is measured in bursts between the rounds of matches (the echo
            # server idles meanwhile): a machine shared with other work drifts, and
            # the first and last bursts show by how much.
            echoes = []
            for flag in ("--echo-server", "--aio-echo-server", "--exchange-echo-server"):
                port_file = Path(tmp) / f"{flag.strip('-')}.port"
                procs.append(
                    subprocess.Popen(
                        [sys.executable, __file__, flag, "127.0.0.1:0", str(port_file)]
                    )
                )
                deadline = time.monotonic() + 20
                while not port_file.exists() and time.monotonic() < deadline:
                    time.sleep(0.02)
                echoes.append((f"127.0.0.1:{int(port_file.read_text())}", f"unix:{port_file}.sock"))
            (echo, echo_unix), aio_echo, exchange_echo = echoes
            meter = FloorMeter(echo, echo_unix, sizes, aio_echo, exchange_echo)
            burst = max(20, args.echo_calls // (args.games + 2))
            meter.burst(burst)
            proc, engine = start(["-m", "engine.server", "--log-level", "WARNING"], Path(tmp), "e")
            procs.append(proc)
            engine_pid = proc.pid
            tcp_bots, unix_bots = [], []
            tcp_pids, unix_pids = [], []
            for i in range(4):
                for unix, bots, pids in ((False, tcp_bots, tcp_pids), (True, unix_bots, unix_pids)):
                    name = f"{'h' if unix else 'b'}{i}"
                    proc, addr = start(
                        ["-m", "examples.random_bot", "--seed", str(i), "--log-level", "WARNING"],
                        Path(tmp),
                        name,
                        unix=unix,
                    )
                    procs.append(proc)
                    bots.append(addr)
                    pids.append(proc.pid)
            runs = over_grpc(
                seeds,
                engine,
                {
                    "grpc": (tcp_bots, False),
                    "grpc_stream": (tcp_bots, True),
                    "hosted_unary": (unix_bots, False),
                    "hosted_stream": (unix_bots, True),
                },
                pids={
                    "grpc": (engine_pid, tcp_pids),
                    "grpc_stream": (engine_pid, tcp_pids),
                    "hosted_unary": (engine_pid, unix_pids),
                    "hosted_stream": (engine_pid, unix_pids),
                },
                between=lambda: meter.burst(burst),
            )
            report.update(runs)
            stop(procs[3:4])
            proc, engine = start(
                [__file__, "--json-format-engine", "--log-level", "WARNING"], Path(tmp), "ref-e"
            )
            procs[3] = proc
            report["grpc_json_format_engine"] = over_grpc(
                seeds, engine, {"grpc": (tcp_bots, False)}
            )["grpc"]
            meter.burst(burst)
            meter.close()
        finally:
            stop(procs)
    report["floor"] = meter.result()
    report["load_average_end"] = list(os.getloadavg())
    report["breakdown_us"] = breakdown(seeds)
    g, a, f = report["grpc"], report["in_process"], report["floor"]
    st, hs, hu = report["grpc_stream"], report["hosted_stream"], report["hosted_unary"]
    report["summary"] = {
        "in_process_decisions_per_s": round(a["per_s"]),
        "grpc_decisions_per_s": round(g["per_s"]),
        "grpc_us_per_decision": round(g["us_per_decision"]),
        "grpc_overhead_us_per_decision": round(g["us_per_decision"] - a["us_per_decision"]),
        "floor_us_per_decision": round(f["floor_us_per_decision"]),
        "ratio_to_floor": round(g["us_per_decision"] / f["floor_us_per_decision"], 2),
        "stream_us_per_decision": round(st["us_per_decision"]),
        "stream_floor_us_per_decision": round(f["stream_floor_us_per_decision"]),
        # The targets: streamed <= 0.5x unary, <= 1.3x the streaming floor.
        "stream_to_unary": round(st["us_per_decision"] / g["us_per_decision"], 2),
        "stream_ratio_to_stream_floor": round(
            st["us_per_decision"] / f["stream_floor_us_per_decision"], 2
        ),
        "hosted_unary_us_per_decision": round(hu["us_per_decision"]),
        "hosted_stream_us_per_decision": round(hs["us_per_decision"]),
        "hosted_stream_to_unary": round(hs["us_per_decision"] / hu["us_per_decision"], 2),
        "hosted_stream_ratio_to_stream_floor": round(
            hs["us_per_decision"] / f["unix_stream_floor_us_per_decision"], 2
        ),
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
    sm = report["summary"]
    print(
        f"machine: {m['cpu']} x{m['cores']}, Python {m['python']}, grpcio {m['grpcio']}; "
        + m["grpc_io"]
    )
    print(
        "load average: {:.2f} {:.2f} {:.2f} at start, ".format(*report["load_average"])
        + "{:.2f} {:.2f} {:.2f} at the end".format(*report["load_average_end"])
    )
    print(f"{args.games} games, 4 seats, normal, random bots")
    print(f"(a) in-process : {a['per_s']:9.0f} decisions/s  {a['us_per_decision']:8.0f} µs each")
    for label, r in (
        ("(b) unary     ", g),
        ("(s) streams   ", st),
        ("(hu) unix unary", hu),
        ("(h) unix streams", hs),
    ):
        c = r["cpu_us_per_decision"]
        print(
            f"{label}: {r['per_s']:9.0f} decisions/s  {r['us_per_decision']:8.0f} µs each"
            f"  (waiting for bots {r['act_share']:.0%} of the time; CPU µs per decision: "
            f"runner {c['runner']:.0f}, engine {c['engine']:.0f}, bots {c['bots']:.0f})"
        )
    print(
        f"    sizes: DecisionRequest {sizes['decision_request']:.0f} B, "
        f"StepResponse {sizes['step_response']:.0f} B"
    )
    print(
        f"unary floor: Act-sized trip {f['act_like_us']:.0f} µs + Step-sized trip "
        f"{f['step_like_us']:.0f} µs = {f['floor_us_per_decision']:.0f} µs/decision "
        f"(mean of {f['bursts']} bursts; first {f['before_us']:.0f}, last {f['after_us']:.0f}; "
        f"tiny trip {f['tiny_us']:.0f} µs)"
    )
    print(
        f"stream floor: {f['act_stream_us']:.0f} + {f['step_stream_us']:.0f} = "
        f"{f['stream_floor_us_per_decision']:.0f} µs/decision, {f['stream_floor_kind']} "
        "(first burst "
        f"{f['stream_before_us']:.0f}, last {f['stream_after_us']:.0f}); bot on a unix socket: "
        f"{f['unix_stream_floor_us_per_decision']:.0f}"
        f" (unary {f['unix_floor_us_per_decision']:.0f}); single-threaded "
        f"{f['single_threaded_stream_us_per_decision']:.0f}, grpcio's blocking stream API "
        f"{f['threaded_stream_us_per_decision']:.0f}, single-threaded to a grpc.aio server "
        f"{f['aio_server_stream_us_per_decision']:.0f}, to a server as the game streams' "
        f"{f['exchange_server_stream_us_per_decision']:.0f}"
    )
    print(
        f"(s) / (b) = {sm['stream_to_unary']} (target <= 0.5), "
        f"(s) / stream floor = {sm['stream_ratio_to_stream_floor']} (target <= 1.3)"
    )
    print(
        f"(h) / (hu) = {sm['hosted_stream_to_unary']} (target <= 0.5), "
        f"(h) / its stream floor = {sm['hosted_stream_ratio_to_stream_floor']} (target <= 1.3)"
    )
    ref = report["grpc_json_format_engine"]
    print(
        f"(b0) gRPC, engine on json_format (the old wire): {ref['per_s']:.0f} decisions/s, "
        f"{ref['us_per_decision']:.0f} µs each, "
        f"{ref['us_per_decision'] / f['floor_us_per_decision']:.2f}x floor"
    )
    lo, hi = sorted((f["before_us"], f["after_us"]))
    print(
        f"(b) / floor = {sm['ratio_to_floor']} "
        f"({g['us_per_decision'] / hi:.2f}-{g['us_per_decision'] / lo:.2f} against either floor), "
        f"(b0) / (b) = {ref['us_per_decision'] / g['us_per_decision']:.2f}"
    )
    print("per-decision work (µs):")
    for k, v in report["breakdown_us"].items():
        print(f"    {k:38s} {v:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
