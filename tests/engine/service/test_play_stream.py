"""The engine's Play stream: one game over one stream, answered like the unary calls.

Real engine processes on loopback. The stream's game must come out exactly as
the same game played by NewGame/Step/GetReplay; errors end the stream with the
unary call's status; the game is closed when the stream ends; past
`--max-streams` a stream is refused (RESOURCE_EXHAUSTED) while unary calls
still work; a stream left silent as long as an idle game is cancelled.
"""

from __future__ import annotations

import queue
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from digdown.v1 import engine_pb2, game_pb2

from .conftest import CALL_TIMEOUT, EngineProcess, start_engine, stop_engine

T = CALL_TIMEOUT


class Stream:
    """A Play stream driven one request at a time (replies read in turn, with a deadline)."""

    def __init__(self, engine: EngineProcess) -> None:
        self.requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.replies = engine.stub.Play(iter(self.requests.get, None), timeout=T)

    def ask(self, **request: Any) -> engine_pb2.PlayResponse:
        self.requests.put(engine_pb2.PlayRequest(**request))
        reply: engine_pb2.PlayResponse = next(self.replies)
        return reply

    def close(self) -> None:
        self.requests.put(None)


def config(seed: int) -> engine_pb2.NewGameRequest:
    return engine_pb2.NewGameRequest(
        config=game_pb2.GameConfig(seed=seed, num_seats=3, difficulty="normal")
    )


def answers(decision: engine_pb2.Decision, rng: random.Random) -> engine_pb2.StepRequest:
    step = engine_pb2.StepRequest(seat=decision.seat, ply=decision.ply, think_time_ms=1)
    step.action.CopyFrom(decision.legal_actions[rng.randrange(len(decision.legal_actions))])
    return step


def test_a_streamed_game_equals_the_unary_game(engine: EngineProcess) -> None:
    stream = Stream(engine)
    created = stream.ask(new_game=config(7)).new_game
    unary = engine.stub.NewGame(config(7), timeout=T)
    assert created.events == unary.events and created.decision == unary.decision
    rng_s, rng_u = random.Random(1), random.Random(1)
    s_next, u_next = created, unary
    while s_next.WhichOneof("next") == "decision":
        s_next = stream.ask(step=answers(s_next.decision, rng_s)).step
        request = answers(u_next.decision, rng_u)
        request.game_id, request.control_token = unary.game_id, unary.control_token
        u_next = engine.stub.Step(request, timeout=T)
        assert s_next == u_next
    replay = stream.ask(get_replay=engine_pb2.GetReplayRequest()).replay.replay
    unary_replay = engine.stub.GetReplay(
        engine_pb2.GetReplayRequest(game_id=unary.game_id, control_token=unary.control_token),
        timeout=T,
    ).replay
    assert replay.events == unary_replay.events and replay.result == unary_replay.result
    assert replay.decisions == unary_replay.decisions
    stream.close()
    assert list(stream.replies) == []  # ends cleanly after the half-close
    # The stream's game is gone with it; its id and token name nothing any more.
    state = engine_pb2.GetStateRequest(game_id=created.game_id, control_token=created.control_token)
    with pytest.raises(grpc.RpcError) as err:
        engine.stub.GetState(state, timeout=T)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize(
    ("first", "code", "says"),
    [
        ({"step": engine_pb2.StepRequest(seat=0)}, grpc.StatusCode.INVALID_ARGUMENT, "new_game"),
        ({}, grpc.StatusCode.INVALID_ARGUMENT, "new_game"),
        ({"new_game": engine_pb2.NewGameRequest()}, grpc.StatusCode.INVALID_ARGUMENT, "config"),
    ],
)
def test_a_bad_request_ends_the_stream_with_the_unary_status(
    engine: EngineProcess, first: dict[str, Any], code: grpc.StatusCode, says: str
) -> None:
    stream = Stream(engine)
    with pytest.raises(grpc.RpcError) as err:
        stream.ask(**first)
    assert err.value.code() == code and says in err.value.details()


def test_errors_after_the_start_are_the_unary_ones(engine: EngineProcess) -> None:
    stream = Stream(engine)
    created = stream.ask(new_game=config(3)).new_game
    with pytest.raises(grpc.RpcError) as err:
        stream.ask(get_replay=engine_pb2.GetReplayRequest())  # before the end
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    stream = Stream(engine)
    created = stream.ask(new_game=config(3)).new_game
    with pytest.raises(grpc.RpcError) as err:
        stream.ask(new_game=config(4))  # one game per stream
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    stream = Stream(engine)
    created = stream.ask(new_game=config(3)).new_game
    stale = answers(created.decision, random.Random(0))
    stale.ply = created.decision.ply + 5
    with pytest.raises(grpc.RpcError) as err:
        stream.ask(step=stale)
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION


@pytest.fixture
def two_stream_engine(tmp_path: Path) -> Iterator[EngineProcess]:
    proc = start_engine(tmp_path, "--max-streams", "2")
    yield proc
    stop_engine(proc)


def test_past_its_stream_limit_play_is_refused_and_unary_still_works(
    two_stream_engine: EngineProcess,
) -> None:
    engine = two_stream_engine
    open_streams = [Stream(engine) for _ in range(2)]
    for i, stream in enumerate(open_streams):
        stream.ask(new_game=config(i))
    with pytest.raises(grpc.RpcError) as err:
        Stream(engine).ask(new_game=config(9))
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "streams" in err.value.details()
    assert engine.stub.NewGame(config(9), timeout=T).game_id  # unary calls are not counted
    open_streams[0].close()
    list(open_streams[0].replies)
    again = Stream(engine)  # a closed stream frees its slot
    assert again.ask(new_game=config(5)).new_game.game_id


def test_a_silent_stream_is_cancelled_like_an_idle_game(fresh_engine: EngineProcess) -> None:
    """fresh_engine forgets games idle for 0.5 s; a Play stream silent that long is cancelled
    (it would hold a thread and a stream slot), with or without a game."""
    for first in ({}, {"new_game": config(2)}):
        stream = Stream(fresh_engine)
        if first:
            stream.ask(**first)
        with pytest.raises(grpc.RpcError) as err:
            next(stream.replies)  # nothing asked: the next event is the end of the stream
        assert err.value.code() == grpc.StatusCode.CANCELLED
