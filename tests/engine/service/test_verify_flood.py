"""A flood of VerifyReplay must not make a busy engine look dead, nor stall its games.

The workers' pool (``workers/runner/engines.py``) asks an engine's health with a
1 s deadline and routes around one that does not answer; the runner steps its
games on the same engine. Replay verification is CPU-bound work a client can
ask for in bulk. Here a real engine with its default limits gets 200 concurrent
VerifyReplay calls while a game is stepped and health is probed, each with the
pool's deadline: every probe and every step must answer in time, and the
verifications beyond the engine's bound are refused with RESOURCE_EXHAUSTED
and a message saying why (never a time-out).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from digdown.v1 import engine_pb2, engine_pb2_grpc
from tests.support.flood import flood
from workers.runner.engines import PROBE_TIMEOUT_S

from .conftest import start_engine, stop_engine
from .test_hostile_clients import _a_replay
from .test_server import new_game

FLOOD = 200
PROBES = 15  # at least; more while the flood has not been refused meanwhile


def _bulky_request(engine: Any) -> engine_pb2.VerifyReplayRequest:
    """A replay whose stored events run on ten times past its game's (a difference at the
    end): about 0.1 s of an engine's CPU to verify, as a long match's replay takes."""
    replay = _a_replay(engine)
    request = engine_pb2.VerifyReplayRequest(replay=replay)
    for _ in range(9):
        request.replay.events.extend(replay.events)
    return request


def _probe(stub: Any) -> str:
    """One health probe as the workers' pool sends it: "SERVING", or what went wrong."""
    try:
        reply = stub.Check(
            health_pb2.HealthCheckRequest(service="digdown.v1.Engine"), timeout=PROBE_TIMEOUT_S
        )
    except grpc.RpcError as err:
        return err.code().name
    return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)


def _step(stub: Any, game: Any, reply: Any) -> tuple[str, Any]:
    """One step of a running game (its default action) within the same deadline."""
    if reply.WhichOneof("next") != "decision":
        return "over", reply
    d = reply.decision
    request = engine_pb2.StepRequest(
        game_id=game.game_id, control_token=game.control_token, seat=d.seat, action=d.default_action
    )
    try:
        return "ok", stub.Step(request, timeout=PROBE_TIMEOUT_S)
    except grpc.RpcError as err:
        # The step may have been played after all: the game says where it is now.
        state = engine_pb2.GetStateRequest(game_id=game.game_id, control_token=game.control_token)
        return err.code().name, stub.GetState(state, timeout=60)


def test_health_and_steps_answer_within_the_pools_deadline_under_a_verify_flood(
    tmp_path: Path,
) -> None:
    engine = start_engine(tmp_path)  # the default limits, as production runs it
    channels = [grpc.insecure_channel(engine.address) for _ in range(4)]  # 4 x 50 streams
    probe_channel = grpc.insecure_channel(engine.address)
    refusals: list[str] = []
    try:
        request = _bulky_request(engine)
        stubs = [engine_pb2_grpc.EngineStub(c) for c in channels]
        health = health_pb2_grpc.HealthStub(probe_channel)
        game_stub = engine_pb2_grpc.EngineStub(probe_channel)
        game = reply = new_game(engine, seed=11, num_seats=4, difficulty="hardcore")

        def verify(n: int) -> grpc.Future:
            call = stubs[n % 4].VerifyReplay.future(request, timeout=120)

            def why(future: grpc.Future) -> None:
                exc = future.exception()
                if exc is not None and len(refusals) < 5:
                    refusals.append(f"{exc.code().name}: {exc.details()}")

            call.add_done_callback(why)
            return call

        probes: list[str] = []
        steps: list[str] = []
        with flood(verify, in_flight=FLOOD) as outcomes:
            time.sleep(1.0)  # let the flood build up
            busy_at_start = sum(outcomes.values())
            until = time.monotonic() + 60
            while len(probes) < PROBES or (
                sum(outcomes.values()) == busy_at_start and time.monotonic() < until
            ):
                probes.append(_probe(health))
                outcome, reply = _step(game_stub, game, reply)
                if outcome != "over":
                    steps.append(outcome)
                time.sleep(0.1)
            answered_meanwhile = sum(outcomes.values()) - busy_at_start
    finally:
        for c in (*channels, probe_channel):
            c.close()
        stop_engine(engine)
    print(f"\nprobes {probes}\nsteps {steps}\nverifications {dict(outcomes)}\n{refusals}")
    # The flood was going on while the probes and steps ran.
    assert answered_meanwhile > 0, outcomes
    assert probes.count("SERVING") == len(probes), probes
    assert steps and steps.count("ok") == len(steps), steps
    # Verifications were done, and the rest refused with a reason, not timed out.
    assert outcomes["ok"] > 0, outcomes
    assert set(outcomes) <= {"ok", "RESOURCE_EXHAUSTED"}, (outcomes, refusals)
    assert all("busy" in r for r in refusals if r.startswith("RESOURCE_EXHAUSTED")), refusals
    assert "Traceback" not in engine.log()
