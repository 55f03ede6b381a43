"""The engine against clients that are not its runner: no token, huge inputs, floods.

Everything over real gRPC to a real engine process. The engine is internal (a
bot in the sandbox cannot reach it, compose does not publish it), and these are
its defences in depth: control of a game is its creator's capability, every
free-text field and every echoed message is bounded, health answers while the
call limit is saturated, and one client cannot take every live-game slot.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from digdown import text
from digdown.v1 import engine_pb2, engine_pb2_grpc, game_pb2
from engine import sessions
from tests.support.flood import flood

from .conftest import CALL_TIMEOUT, EngineProcess, start_engine, stop_engine
from .test_server import new_game, play_out

T = CALL_TIMEOUT
MB = 1024 * 1024


def _code(call: Any, request: Any) -> tuple[grpc.StatusCode, str]:
    try:
        call(request, timeout=T)
    except grpc.RpcError as err:
        return err.code(), err.details() or ""
    return grpc.StatusCode.OK, ""


def test_only_the_creators_token_controls_a_game(engine: EngineProcess) -> None:
    """A bot knows the game_id; without the token it can neither act, look nor close."""
    game = new_game(engine, seed=101)
    other = new_game(engine, seed=102)
    gid, d = game.game_id, game.decision
    victim = 1 - d.seat
    unknown = _code(
        engine.stub.Step,
        engine_pb2.StepRequest(game_id="no-such-game", control_token="t" * 43, seat=0, fault="x"),
    )
    assert unknown[0] == grpc.StatusCode.NOT_FOUND
    real = game.control_token
    one_off = real[:-1] + ("B" if real.endswith("A") else "A")  # never the real token itself
    for token in ("guessed-" + "x" * 35, other.control_token, one_off):
        calls = [
            (
                engine.stub.Step,
                engine_pb2.StepRequest(
                    game_id=gid, control_token=token, seat=victim, forfeit="pwned"
                ),
            ),
            (
                engine.stub.GetState,
                engine_pb2.GetStateRequest(game_id=gid, control_token=token, observer=victim),
            ),
            (engine.stub.GetRecord, engine_pb2.GetRecordRequest(game_id=gid, control_token=token)),
            (engine.stub.GetReplay, engine_pb2.GetReplayRequest(game_id=gid, control_token=token)),
        ]
        for call, request in calls:
            # The very answer an unknown id gets: the engine does not confirm the game exists.
            assert _code(call, request) == unknown, (call, token)
        close = engine_pb2.CloseGameRequest(game_id=gid, control_token=token)
        assert not engine.stub.CloseGame(close, timeout=T).closed
    # No token at all: a clear INVALID_ARGUMENT that names what is missing.
    code, message = _code(engine.stub.Step, engine_pb2.StepRequest(game_id=gid, seat=0, fault="x"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "control_token" in message
    # Nothing was applied: the creator finds the game as it was, and plays it to its end.
    state = engine.stub.GetState(
        engine_pb2.GetStateRequest(game_id=gid, control_token=game.control_token), timeout=T
    )
    assert state.decision == d
    _, result, _ = play_out(engine, game, seed=101)
    assert all(s.reason != "pwned" for s in result.seats)
    close = engine_pb2.CloseGameRequest(game_id=gid, control_token=game.control_token)
    assert engine.stub.CloseGame(close, timeout=T).closed
    assert game.control_token not in engine.log()


def test_huge_inputs_get_short_reasons(engine: EngineProcess) -> None:
    """A megabyte in any free-text field: refused with a short message, or stored cut."""
    big = "\x1b[31m" + "x" * MB
    for field in ("ruleset", "difficulty"):
        config = game_pb2.GameConfig(seed=1, num_seats=2, difficulty="normal")
        setattr(config, field, big)
        code, message = _code(engine.stub.NewGame, engine_pb2.NewGameRequest(config=config))
        assert code == grpc.StatusCode.INVALID_ARGUMENT, field
        assert f"{field} is longer than" in message and len(message) <= text.MESSAGE_MAX
    game = new_game(engine, seed=103)
    d = game.decision
    for request in [
        engine_pb2.StepRequest(game_id=big, control_token="t", seat=0, fault="x"),
        engine_pb2.StepRequest(game_id=game.game_id, control_token=big, seat=0, fault="x"),
        engine_pb2.StepRequest(
            game_id=game.game_id,
            control_token=game.control_token,
            seat=d.seat,
            action=game_pb2.Action(trade=game_pb2.Trade(item=big)),
        ),
    ]:
        code, message = _code(engine.stub.Step, request)
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert 0 < len(message) <= text.MESSAGE_MAX and "\x1b" not in message

    # A 12 MB fault reason is accepted and kept as 200 clean characters.
    fault = engine_pb2.StepRequest(
        game_id=game.game_id,
        control_token=game.control_token,
        seat=d.seat,
        fault="\x00\x1b[2J" + "r" * (12 * MB),
    )
    reply = engine.stub.Step(fault, timeout=T)
    assert reply.events[0].kind == "FAULT"
    assert reply.events[0].reason == "[2J" + "r" * 196 + text.ELLIPSIS


def test_seat_labels_are_cleaned_in_the_replay(engine: EngineProcess) -> None:
    config = game_pb2.GameConfig(seed=104, num_seats=2, difficulty="easy")
    seats = [
        game_pb2.SeatInfo(seat=7, bot="\x1b]0;pwn\x07evil\r\nbot" + "b" * 5000, version="1\x00"),
        game_pb2.SeatInfo(seat=9, bot="fine", version="2"),
    ]
    game = engine.stub.NewGame(engine_pb2.NewGameRequest(config=config, seats=seats), timeout=T)
    play_out(engine, game, seed=104)
    replay = engine.stub.GetReplay(
        engine_pb2.GetReplayRequest(game_id=game.game_id, control_token=game.control_token),
        timeout=T,
    ).replay
    first, second = replay.seats
    assert (first.seat, second.seat) == (0, 1)
    assert first.bot.startswith("]0;pwnevil bot") and len(first.bot) == text.NAME_MAX
    assert (first.version, second.bot, second.version) == ("1", "fine", "2")
    # A replay that quotes a megabyte verifies with a bounded answer.
    replay.seats[0].bot = "y" * MB
    replay.events[3].reason = "z" * MB
    verdict = engine.stub.VerifyReplay(engine_pb2.VerifyReplayRequest(replay=replay), timeout=T)
    assert not verdict.ok and len(verdict.first_difference) <= text.MESSAGE_MAX


def _a_replay(engine: EngineProcess) -> game_pb2.Replay:
    game = new_game(engine, seed=105, num_seats=4, difficulty="hardcore")
    play_out(engine, game, seed=105)
    return engine.stub.GetReplay(
        engine_pb2.GetReplayRequest(game_id=game.game_id, control_token=game.control_token),
        timeout=T,
    ).replay


def test_health_and_reflection_answer_while_the_call_limit_is_saturated(tmp_path: Path) -> None:
    """200 concurrent VerifyReplay calls on an engine that admits 8 (2 running): the excess is
    refused at once, and every health probe still says SERVING. Limits this far below the flood
    keep it saturated however fast the engine verifies (with the defaults, 16 running and 64
    admitted, a fast build drained the flood as quickly as one client could send it)."""
    engine = start_engine(tmp_path, "--max-workers", "2", "--max-concurrent-rpcs", "8")
    channels = [grpc.insecure_channel(engine.address) for _ in range(4)]  # 4 x 50 streams
    try:
        request = engine_pb2.VerifyReplayRequest(replay=_a_replay(engine))
        stubs = [engine_pb2_grpc.EngineStub(c) for c in channels]

        def verify(n: int) -> grpc.Future:
            return stubs[n % 4].VerifyReplay.future(request, timeout=60)

        with flood(verify, in_flight=200) as outcomes:
            deadline = time.monotonic() + 60
            while outcomes["RESOURCE_EXHAUSTED"] < 20 and time.monotonic() < deadline:
                time.sleep(0.05)  # until the limit is being hit
            refused_before = outcomes["RESOURCE_EXHAUSTED"]
            probes, slowest, probing_until = [], 0.0, time.monotonic() + 60
            # Ten probes at least, and on until the flood was refused again meanwhile (on
            # a loaded machine the flood can fall below the limit for a moment; a fixed
            # window would make the test depend on the machine's speed).
            while len(probes) < 10 or (
                outcomes["RESOURCE_EXHAUSTED"] == refused_before
                and time.monotonic() < probing_until
            ):
                started = time.monotonic()
                probes.append(engine.health("digdown.v1.Engine"))
                slowest = max(slowest, time.monotonic() - started)
                time.sleep(0.2)
            reflection = reflection_pb2_grpc.ServerReflectionStub(engine.channel)
            listed = list(
                reflection.ServerReflectionInfo(
                    iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=T
                )
            )
            refused_while_probing = outcomes["RESOURCE_EXHAUSTED"]
    finally:
        for c in channels:
            c.close()
        stop_engine(engine)
    assert set(probes) == {health_pb2.HealthCheckResponse.SERVING}, (probes, outcomes)
    assert listed[0].list_services_response.service
    # The limit was being hit before and while the probes ran.
    assert refused_while_probing > refused_before >= 20 and outcomes["ok"] > 0, outcomes
    assert set(outcomes) == {"ok", "RESOURCE_EXHAUSTED"}, outcomes
    print(f"\nhealth under load: slowest probe {slowest * 1000:.0f} ms; calls {dict(outcomes)}")
    assert "Traceback" not in engine.log()


def test_one_client_cannot_take_every_game_slot(tmp_path: Path) -> None:
    engine = start_engine(tmp_path, "--max-games", "10", "--max-games-per-client", "3")
    try:
        games = [new_game(engine, seed=s) for s in range(3)]
        with pytest.raises(grpc.RpcError) as err:
            new_game(engine, seed=9)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "this client has 3 live games" in (err.value.details() or "")
        close = engine_pb2.CloseGameRequest(
            game_id=games[0].game_id, control_token=games[0].control_token
        )
        assert engine.stub.CloseGame(close, timeout=T).closed
        assert new_game(engine, seed=10).game_id  # its own slot is free again
    finally:
        stop_engine(engine)
    assert "at its quota of 3 live games" in engine.log()


def test_the_quota_is_per_client() -> None:
    """Another client still starts games while one sits on its quota (peer addresses differ
    only across hosts, so this is the store itself, as the server uses it)."""
    store = sessions.SessionStore(max_games=10, max_games_per_client=3)
    config = game_pb2.GameConfig(seed=1, num_seats=2, difficulty="normal")
    hoarded = [store.create(config, [], client="ipv4:10.0.0.66")[0] for _ in range(3)]
    with pytest.raises(sessions.ServiceError) as err:
        store.create(config, [], client="ipv4:10.0.0.66")
    assert err.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    runner, _ = store.create(config, [], client="ipv4:10.0.0.5")
    assert store.get(runner.game_id, runner.control_token) is runner
    # Expiry and close give slots back to the client that held them.
    assert store.close(hoarded[0].game_id, hoarded[0].control_token)
    store.create(config, [], client="ipv4:10.0.0.66")
    assert len(store.expire(now=time.monotonic() + 10_000)) == 4
    assert len(store) == 0
    for _ in range(3):
        store.create(config, [], client="ipv4:10.0.0.66")
