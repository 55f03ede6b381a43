"""The runner's pass-through messages: a bot gets the very bytes it got before.

A streamed engine's decision is read with its observation as bytes
(workers.runner.passthrough) and sent on that way; the request must encode byte
for byte as the one built from the parsed observation, for every decision of real
games (and for an empty observation, which must still be sent).
"""

from __future__ import annotations

import random

import pytest

from digdown import wire
from digdown.v1 import bot_pb2, engine_pb2
from engine.rules import GameConfig, new_game
from workers.runner.passthrough import (
    RawDecision,
    RawDecisionRequest,
    RawPlayResponse,
    decision_message,
    observation_message,
)

_FIELDS = dict(game_id="g" * 36, time_left_ms=29_500, deadline_ms=1000)


def _requests(raw: RawDecision, parsed: engine_pb2.Decision, events: list) -> tuple[bytes, bytes]:
    fields = dict(_FIELDS, events=events)
    old = bot_pb2.DecisionRequest(
        seat=parsed.seat,
        observation=parsed.observation,
        legal_actions=parsed.legal_actions,
        ply=parsed.ply,
        **fields,
    )
    new = RawDecisionRequest(
        seat=raw.seat,
        observation=raw.observation,
        legal_actions=raw.legal_actions,
        ply=raw.ply,
        **fields,
    )
    return old.SerializeToString(), new.SerializeToString()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_requests_from_the_engines_bytes_are_byte_identical(seed: int) -> None:
    state = new_game(GameConfig(seed=seed, num_seats=4, difficulty="normal"))
    rng = random.Random(seed)
    pending: list = []
    checked = 0
    while not state.is_over:
        legal = state.legal_actions()
        if len(legal) == 1:
            pending.extend(state.apply_forced())
            continue
        seat = state.acting_seat
        response = engine_pb2.PlayResponse(
            step=engine_pb2.StepResponse(
                events=wire.events_to_proto(pending),
                decision=engine_pb2.Decision(
                    seat=seat,
                    observation=wire.observation_to_proto(state.observation(seat)),
                    legal_actions=wire.actions_to_proto(legal),
                    default_action=wire.action_to_proto(state.default_action()),
                    ply=len(state.record["entries"]),
                ),
            )
        ).SerializeToString()
        parsed = engine_pb2.PlayResponse.FromString(response).step
        raw = RawPlayResponse.FromString(response).step
        assert raw.WhichOneof("next") == "decision"
        old, new = _requests(raw.decision, parsed.decision, list(parsed.events))
        assert new == old
        # Other transports (connected bots) get the real message, built as before.
        rebuilt = bot_pb2.DecisionRequest(
            seat=raw.decision.seat,
            observation=observation_message(raw.decision.observation),
            legal_actions=raw.decision.legal_actions,
            ply=raw.decision.ply,
            **_FIELDS,
            events=list(parsed.events),
        )
        assert rebuilt.SerializeToString() == old
        assert decision_message(raw.decision) == parsed.decision
        checked += 1
        pending = list(state.apply(legal[rng.randrange(len(legal))]))
    assert checked > 10


def test_an_empty_observation_is_still_sent() -> None:
    decision = engine_pb2.Decision(seat=2, ply=7)
    decision.observation.SetInParent()
    data = engine_pb2.PlayResponse(step=engine_pb2.StepResponse(decision=decision))
    raw = RawPlayResponse.FromString(data.SerializeToString()).step.decision
    assert raw.HasField("observation")
    old, new = _requests(raw, decision, [])
    assert new == old
    absent = RawPlayResponse.FromString(
        engine_pb2.PlayResponse(
            step=engine_pb2.StepResponse(decision=engine_pb2.Decision(seat=1))
        ).SerializeToString()
    ).step.decision
    assert not absent.HasField("observation")


@pytest.mark.parametrize("answer", ["action", "fault", "forfeit"])
def test_a_step_sent_on_the_play_stream_is_the_play_requests_bytes(answer: str) -> None:
    """The streamed engine sends a step as the bytes of ``PlayRequest(step=...)`` made
    without copying the step into one: the same bytes, for every kind of answer and
    for steps longer than one byte of length."""
    from workers.runner.engine_stream import _STEP_TAG, _play_bytes, _varint

    for reason in ("", "x" * 200):
        step = engine_pb2.StepRequest(
            game_id="g" * 36, control_token="t" * 43, seat=3, ply=417, think_time_ms=12
        )
        if answer == "action":
            step.action.done.SetInParent()  # a oneof message set, empty
        elif answer == "fault":
            step.fault = reason or "timeout"
        else:
            step.forfeit = reason or "dead"
        data = step.SerializeToString()
        sent = _play_bytes(_STEP_TAG + _varint(len(data)) + data)
        assert sent == engine_pb2.PlayRequest(step=step).SerializeToString()
        assert engine_pb2.PlayRequest.FromString(sent).step == step
