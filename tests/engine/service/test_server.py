"""The engine over real gRPC: full games, error statuses, health, reflection, shutdown."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from digdown import wire
from digdown.v1 import engine_pb2, game_pb2
from engine.rules import replay_record

from .conftest import CALL_TIMEOUT, EngineProcess, start_engine, stop_engine

T = CALL_TIMEOUT


def new_game(
    engine: EngineProcess, seed: int = 1, num_seats: int = 2, difficulty: str = "normal"
) -> engine_pb2.NewGameResponse:
    config = game_pb2.GameConfig(seed=seed, num_seats=num_seats, difficulty=difficulty)
    return engine.stub.NewGame(engine_pb2.NewGameRequest(config=config), timeout=T)


def play_out(
    engine: EngineProcess, start: engine_pb2.NewGameResponse, seed: int
) -> tuple[list[dict[str, Any]], game_pb2.Result, int]:
    """Play random legal actions to the end; returns every event, the result, decisions asked."""
    rng = random.Random(seed)
    events = [wire.event_from_proto(e) for e in start.events]
    public: set[int] = set()  # cave card ids whose face an event made public

    def note(new_events: Any) -> None:
        for e in new_events:
            if e.kind in ("PEEK", "REVEAL"):
                public.add(e.card.id)

    note(start.events)
    reply: Any = start
    asked = 0
    while reply.WhichOneof("next") == "decision":
        d = reply.decision
        assert len(d.legal_actions) >= 2, "single-choice decisions are the engine's to play"
        assert d.observation.acting_seat == d.seat == d.observation.seat
        assert d.default_action in d.legal_actions
        # No face is shown that no public event (peek, reveal) has shown before.
        shown = {p.top.id for p in d.observation.passages if p.HasField("top")}
        if d.observation.HasField("resolution"):
            shown.add(d.observation.resolution.card.id)
        assert shown <= public, f"hidden faces leaked: {shown - public}"
        request = engine_pb2.StepRequest(
            game_id=start.game_id,
            control_token=start.control_token,
            seat=d.seat,
            action=rng.choice(d.legal_actions),
            ply=d.ply,
            think_time_ms=7 + d.ply,
        )
        reply = engine.stub.Step(request, timeout=T)
        assert reply.WhichOneof("next") == "result" or reply.decision.ply > d.ply
        events.extend(wire.event_from_proto(e) for e in reply.events)
        note(reply.events)
        asked += 1
    return events, reply.result, asked


@pytest.mark.parametrize(
    ("seed", "num_seats", "difficulty"),
    [(1, 2, "easy"), (2, 3, "normal"), (3, 4, "hard"), (4, 4, "hardcore")],
)
def test_full_game_over_grpc_streams_every_event_and_replays(
    engine: EngineProcess, seed: int, num_seats: int, difficulty: str
) -> None:
    start = new_game(engine, seed, num_seats, difficulty)
    assert start.events[0].kind == "GAME_START"
    events, result, asked = play_out(engine, start, seed)
    assert asked > 0
    assert len(result.ranks) == num_seats and sorted(result.ranks)[0] == 1
    assert events[-1]["kind"] == "GAME_END"

    record = engine.stub.GetRecord(
        engine_pb2.GetRecordRequest(game_id=start.game_id, control_token=start.control_token),
        timeout=T,
    )
    replayed, replayed_result = replay_record(wire.record_from_proto(record.record))
    # The responses carried every event, forced plays included, in order.
    assert [wire.event_from_proto(wire.event_to_proto(e)) for e in replayed] == events
    assert wire.result_to_proto(replayed_result or {}) == result

    replay = engine.stub.GetReplay(
        engine_pb2.GetReplayRequest(game_id=start.game_id, control_token=start.control_token),
        timeout=T,
    ).replay
    assert replay.format == "digdown-replay/1" and replay.result == result
    assert len(replay.decisions) == len(record.record.entries)
    assert sum(d.num_events for d in replay.decisions) + replay.decisions[0].first_event == len(
        events
    )
    assert sum(not d.forced for d in replay.decisions) == asked
    for ply, dec in enumerate(replay.decisions):
        assert dec.think_time_ms == (0 if dec.forced else 7 + ply)
    verdict = engine.stub.VerifyReplay(engine_pb2.VerifyReplayRequest(replay=replay), timeout=T)
    assert verdict.ok, verdict.first_difference
    assert verdict.num_events == len(events)


def test_record_and_replay_only_after_the_end(engine: EngineProcess) -> None:
    start = new_game(engine, seed=11)
    for call, request in [
        (
            engine.stub.GetRecord,
            engine_pb2.GetRecordRequest(game_id=start.game_id, control_token=start.control_token),
        ),
        (
            engine.stub.GetReplay,
            engine_pb2.GetReplayRequest(game_id=start.game_id, control_token=start.control_token),
        ),
    ]:
        with pytest.raises(grpc.RpcError) as err:
            call(request, timeout=T)
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "not over" in (err.value.details() or "")


def test_observations_never_carry_the_seed_or_unknown_faces(engine: EngineProcess) -> None:
    start = new_game(engine, seed=987654321)
    assert "seed" not in game_pb2.Observation.DESCRIPTOR.fields_by_name
    obs = start.decision.observation
    # At the start nothing has been peeked or revealed.
    assert all(not p.HasField("top") for p in obs.passages)
    state = engine.stub.GetState(
        engine_pb2.GetStateRequest(
            game_id=start.game_id, control_token=start.control_token, observer=0
        ),
        timeout=T,
    )
    assert state.observation.seat == 0
    assert all(not p.HasField("top") for p in state.observation.passages)


def _fail(call: Any, request: Any) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        call(request, timeout=T)
    return err.value


def test_bad_requests_get_clear_statuses_and_the_server_keeps_serving(
    engine: EngineProcess,
) -> None:
    start = new_game(engine, seed=5)
    d = start.decision
    gid, tok = start.game_id, start.control_token
    step = engine.stub.Step

    err = _fail(
        step, engine_pb2.StepRequest(game_id="no-such-game", control_token=tok, seat=0, fault="x")
    )
    assert err.code() == grpc.StatusCode.NOT_FOUND

    other = (d.seat + 1) % 2
    err = _fail(
        step,
        engine_pb2.StepRequest(
            game_id=gid, control_token=tok, seat=other, action=d.legal_actions[0]
        ),
    )
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert f"seat {d.seat} is" in (err.details() or "")

    illegal = game_pb2.Action(commit=game_pb2.Commit(tool_id=1))
    err = _fail(
        step, engine_pb2.StepRequest(game_id=gid, control_token=tok, seat=d.seat, action=illegal)
    )
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "not legal" in (err.details() or "")

    err = _fail(step, engine_pb2.StepRequest(game_id=gid, control_token=tok, seat=d.seat))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT

    err = _fail(
        step,
        engine_pb2.StepRequest(
            game_id=gid, control_token=tok, seat=d.seat, action=game_pb2.Action()
        ),
    )
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no kind" in (err.details() or "")

    err = _fail(step, engine_pb2.StepRequest(game_id=gid, control_token=tok, seat=9, forfeit="x"))
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT

    for config in [
        game_pb2.GameConfig(seed=1, num_seats=5, difficulty="normal"),
        game_pb2.GameConfig(seed=1, num_seats=2, difficulty="impossible"),
        game_pb2.GameConfig(seed=-1, num_seats=2, difficulty="normal"),
        game_pb2.GameConfig(seed=1, num_seats=2, difficulty="normal", ruleset="dd-99"),
    ]:
        err = _fail(engine.stub.NewGame, engine_pb2.NewGameRequest(config=config))
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT, config
        assert "bad game config" in (err.details() or "")
    err = _fail(engine.stub.NewGame, engine_pb2.NewGameRequest())
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT

    # Nothing was applied by the failures; the game and the server go on.
    again = engine.stub.GetState(
        engine_pb2.GetStateRequest(game_id=gid, control_token=tok), timeout=T
    )
    assert again.decision == d
    ok = engine.stub.Step(
        engine_pb2.StepRequest(
            game_id=gid, control_token=tok, seat=d.seat, action=d.default_action
        ),
        timeout=T,
    )
    assert ok.WhichOneof("next") in ("decision", "result")
    assert engine.health() == health_pb2.HealthCheckResponse.SERVING
    assert "Traceback" not in engine.log()


def test_retried_step_is_answered_once_and_stale_ply_refused(engine: EngineProcess) -> None:
    start = new_game(engine, seed=21, num_seats=3)
    d = start.decision
    request = engine_pb2.StepRequest(
        game_id=start.game_id,
        control_token=start.control_token,
        seat=d.seat,
        action=d.legal_actions[-1],
        ply=d.ply,
    )
    first = engine.stub.Step(request, timeout=T)
    second = engine.stub.Step(request, timeout=T)  # e.g. the first answer was lost
    assert first == second
    state = engine.stub.GetState(
        engine_pb2.GetStateRequest(game_id=start.game_id, control_token=start.control_token),
        timeout=T,
    )
    assert state.decision == first.decision
    stale = engine_pb2.StepRequest(
        game_id=start.game_id,
        control_token=start.control_token,
        seat=first.decision.seat,
        fault="late",
        ply=d.ply,
    )
    err = _fail(engine.stub.Step, stale)
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "stale" in (err.details() or "")


def test_faults_play_the_default_and_forfeit_ends_a_seat(engine: EngineProcess) -> None:
    start = new_game(engine, seed=8, num_seats=3)
    gid, tok = start.game_id, start.control_token
    d = start.decision
    faulty = d.seat
    reply: Any = start
    for n in range(1, 4):
        # Fault the same seat whenever it acts, until its third fault forfeits it.
        while reply.decision.seat != faulty:
            dd = reply.decision
            reply = engine.stub.Step(
                engine_pb2.StepRequest(
                    game_id=gid, control_token=tok, seat=dd.seat, action=dd.default_action
                ),
                timeout=T,
            )
        reply = engine.stub.Step(
            engine_pb2.StepRequest(
                game_id=gid, control_token=tok, seat=faulty, fault="deadline exceeded"
            ),
            timeout=T,
        )
        kinds = [e.kind for e in reply.events]
        assert kinds[0] == "FAULT" and reply.events[0].amount == n
        if n == 3:
            assert "FORFEIT" in kinds
    players = engine.stub.GetState(
        engine_pb2.GetStateRequest(game_id=gid, control_token=tok, observer=faulty), timeout=T
    ).observation.players
    assert players[faulty].forfeited and players[faulty].faults == 3

    # A dead bot: any seat still in the game can be forfeited, acting or not.
    nxt = reply.decision
    alive = [p.seat for p in players if not p.eliminated]
    victim = next(s for s in alive if s != nxt.seat)
    reply = engine.stub.Step(
        engine_pb2.StepRequest(game_id=gid, control_token=tok, seat=victim, forfeit="process died"),
        timeout=T,
    )
    assert reply.events[0].kind == "FORFEIT" and reply.events[0].seat == victim
    assert reply.WhichOneof("next") == "result"  # one seat left of three
    err = _fail(
        engine.stub.Step,
        engine_pb2.StepRequest(game_id=gid, control_token=tok, seat=victim, forfeit="again"),
    )
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    record = engine.stub.GetRecord(
        engine_pb2.GetRecordRequest(game_id=gid, control_token=tok), timeout=T
    ).record
    entries = [e.WhichOneof("entry") for e in record.entries]
    assert entries.count("fault") == 3 and entries.count("forfeit") == 1


def test_verify_replay_reports_the_first_difference(engine: EngineProcess) -> None:
    start = new_game(engine, seed=31)
    play_out(engine, start, 31)
    replay = engine.stub.GetReplay(
        engine_pb2.GetReplayRequest(game_id=start.game_id, control_token=start.control_token),
        timeout=T,
    ).replay

    def verify(**subject: Any) -> engine_pb2.VerifyReplayResponse:
        request = engine_pb2.VerifyReplayRequest(**subject)
        return engine.stub.VerifyReplay(request, timeout=T)

    tampered = game_pb2.Replay()
    tampered.CopyFrom(replay)
    tampered.events[4].hearts = 99
    verdict = verify(replay=tampered)
    assert not verdict.ok and verdict.event_index == 4
    assert "hearts" in verdict.first_difference

    tampered.CopyFrom(replay)
    tampered.result.winner = 7
    verdict = verify(replay=tampered)
    assert not verdict.ok and "winner" in verdict.first_difference

    tampered.CopyFrom(replay)
    tampered.cave[0].cards.reverse()
    assert not verify(replay=tampered).ok

    record = engine.stub.GetRecord(
        engine_pb2.GetRecordRequest(game_id=start.game_id, control_token=start.control_token),
        timeout=T,
    ).record
    assert verify(record=engine_pb2.RecordWithOutcome(record=record)).ok
    broken = game_pb2.Record()
    broken.CopyFrom(record)
    broken.entries[3].action.CopyFrom(game_pb2.Action(commit=game_pb2.Commit(tool_id=0)))
    broken.entries[3].forced = False
    verdict = verify(record=engine_pb2.RecordWithOutcome(record=broken))
    assert not verdict.ok and "cannot re-simulate" in verdict.first_difference

    err = _fail(engine.stub.VerifyReplay, engine_pb2.VerifyReplayRequest())
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_close_game_forgets_it(engine: EngineProcess) -> None:
    start = new_game(engine, seed=41)
    request = engine_pb2.CloseGameRequest(game_id=start.game_id, control_token=start.control_token)
    assert engine.stub.CloseGame(request, timeout=T).closed
    assert not engine.stub.CloseGame(request, timeout=T).closed
    err = _fail(
        engine.stub.GetState,
        engine_pb2.GetStateRequest(game_id=start.game_id, control_token=start.control_token),
    )
    assert err.code() == grpc.StatusCode.NOT_FOUND


def test_health_and_reflection_answer(engine: EngineProcess) -> None:
    assert engine.health("") == health_pb2.HealthCheckResponse.SERVING
    assert engine.health("digdown.v1.Engine") == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(engine.channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    replies = list(stub.ServerReflectionInfo(iter([request]), timeout=T))
    names = {s.name for s in replies[0].list_services_response.service}
    assert {"digdown.v1.Engine", "grpc.health.v1.Health"} <= names


def test_idle_games_expire(fresh_engine: EngineProcess) -> None:
    start = new_game(fresh_engine, seed=51)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            fresh_engine.stub.GetState(
                engine_pb2.GetStateRequest(
                    game_id=start.game_id, control_token=start.control_token
                ),
                timeout=T,
            )
        except grpc.RpcError as err:
            assert err.code() == grpc.StatusCode.NOT_FOUND
            break
        time.sleep(1.0)  # longer than the 0.5 s idle timeout, so it expires between calls
    else:
        pytest.fail("idle game never expired")
    assert "expired" in fresh_engine.log()


def test_sigterm_stops_cleanly_within_grace(fresh_engine: EngineProcess) -> None:
    new_game(fresh_engine, seed=61)
    fresh_engine.proc.send_signal(signal.SIGTERM)
    assert fresh_engine.proc.wait(timeout=2 + 3) == 0  # grace 2 s + margin; raises if later
    log = fresh_engine.log()
    assert "received SIGTERM" in log and "stopped" in log and "Traceback" not in log
    with pytest.raises(grpc.RpcError) as err:
        new_game(fresh_engine, seed=62)
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE


def test_second_engine_on_a_taken_port_fails_loudly(engine: EngineProcess, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="cannot listen"):
        second = start_engine(tmp_path, listen=engine.address)
        stop_engine(second)
    assert engine.health() == health_pb2.HealthCheckResponse.SERVING


def test_console_script_help_runs() -> None:
    out = subprocess.run(
        [str(Path(sys.executable).parent / "digdown-engine"), "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    assert "--listen" in out.stdout


def test_live_game_limit_is_resource_exhausted(tmp_path: Path) -> None:
    engine = start_engine(tmp_path, "--max-games", "2")
    try:
        first = new_game(engine, seed=71)
        new_game(engine, seed=72)
        with pytest.raises(grpc.RpcError) as err:
            new_game(engine, seed=73)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        engine.stub.CloseGame(
            engine_pb2.CloseGameRequest(game_id=first.game_id, control_token=first.control_token),
            timeout=T,
        )
        assert new_game(engine, seed=74).game_id
    finally:
        stop_engine(engine)
