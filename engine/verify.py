"""Replay verification: re-simulate a record from its stored cave and compare.

A replay is only trustworthy if the engine, fed the same cave and decisions,
produces the same events and result. This answers "where does it first
differ" in words a person can act on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from digdown import text, wire
from digdown.types import Event, Result
from digdown.v1 import engine_pb2, game_pb2
from engine.rules import ENGINE_VERSION, replay_record


def normal_events(events: Sequence[Mapping[str, Any]]) -> list[Event]:
    """Events as they look after a trip over the wire (so both sides compare alike)."""
    return [wire.event_from_proto(wire.event_to_proto(e)) for e in events]


def normal_result(result: Mapping[str, Any]) -> Result:
    """A result as it looks after a trip over the wire."""
    return wire.result_from_proto(wire.result_to_proto(result))


def _describe(expected: dict[str, Any], got: dict[str, Any]) -> str:
    keys = sorted(set(expected) | set(got))
    diffs = [f"{k}: stored {expected.get(k)!r}, engine {got.get(k)!r}" for k in keys
             if expected.get(k) != got.get(k)]  # fmt: skip
    return "; ".join(diffs)


def first_event_difference(
    expected: Sequence[Mapping[str, Any]], got: Sequence[Mapping[str, Any]]
) -> tuple[int, str] | None:
    """(index, description) of the first differing event, or None if equal."""
    for i, (e, g) in enumerate(zip(expected, got, strict=False)):
        if e != g:
            return i, f"event {i} ({e.get('kind')} vs {g.get('kind')}) differs: {_describe(e, g)}"
    if len(expected) != len(got):
        i = min(len(expected), len(got))
        return i, f"stored replay has {len(expected)} events, re-simulation {len(got)}"
    return None


def first_difference(
    expected_events: Sequence[Mapping[str, Any]] | None,
    expected_result: Mapping[str, Any] | None,
    events: Sequence[Mapping[str, Any]],
    result: Mapping[str, Any] | None,
) -> tuple[int, str] | None:
    """Where a re-simulation (`events`, `result`) first departs from what was stored.

    (event index, description), with index -1 for a difference in the result
    only; None when they agree. Expected values are compared after a trip over
    the wire; either may be None (not stored: not compared).
    """
    if expected_events and expected_events != events:  # equal as they are: equal on the wire
        diff = first_event_difference(normal_events(expected_events), normal_events(events))
        if diff is not None:
            return diff
    if expected_result is not None:
        if result is None:
            return -1, "the record does not reach the end of the game"
        mine = normal_result(result)
        if mine != expected_result:
            return -1, "result differs: " + _describe(expected_result, mine)
    return None


def version_note(record: dict[str, Any]) -> str:
    """Why a record of another engine version may play out differently; empty if the same.

    ENGINE_VERSION changes exactly when a record can play out differently, so a
    failure under another version is first of all that; it is said before the
    difference so that nobody hunts a corrupt file that is merely old (or new).
    """
    recorded = record.get("engine_version") or "an unrecorded engine version"
    if recorded == ENGINE_VERSION:
        return ""
    return f"recorded by {recorded}, re-simulated by {ENGINE_VERSION} (engine version mismatch)"


def verify(
    record: dict[str, Any],
    expected_events: list[dict[str, Any]] | None,
    expected_result: dict[str, Any] | None,
) -> engine_pb2.VerifyReplayResponse:
    """Re-simulate `record`; compare with the expected events (if any) and result (if any).

    A record of another engine version that re-simulates identically verifies:
    the version only explains a difference, it is not one.
    """
    response = _compare(record, expected_events, expected_result)
    note = version_note(record)
    if not response.ok and note:
        response.first_difference = f"{note}: {response.first_difference}"
    return response


def _compare(
    record: dict[str, Any],
    expected_events: list[dict[str, Any]] | None,
    expected_result: dict[str, Any] | None,
) -> engine_pb2.VerifyReplayResponse:
    try:
        events, result = replay_record(record)
    except Exception as exc:  # any failure of a hostile or corrupt record is a verdict
        return engine_pb2.VerifyReplayResponse(
            ok=False, first_difference=f"cannot re-simulate: {exc}", event_index=-1
        )
    response = engine_pb2.VerifyReplayResponse(ok=True, event_index=-1, num_events=len(events))
    if result is not None:
        response.result.CopyFrom(wire.result_to_proto(result))
    diff = first_difference(expected_events, expected_result, events, result)
    if diff is not None:
        response.ok = False
        response.event_index, response.first_difference = diff
    return response


def verify_request(request: engine_pb2.VerifyReplayRequest) -> engine_pb2.VerifyReplayResponse:
    """VerifyReplay for either subject; WireError for a request that cannot be read."""
    which = request.WhichOneof("subject")
    if which == "replay":
        replay: game_pb2.Replay = request.replay
        record = wire.replay_to_record(replay)
        events = [wire.event_from_proto(e) for e in replay.events]
        result = wire.result_from_proto(replay.result) if replay.HasField("result") else None
        return verify(record, events, result)
    if which == "record":
        subject = request.record
        record = wire.record_from_proto(subject.record)
        events = [wire.event_from_proto(e) for e in subject.events]
        result = wire.result_from_proto(subject.result) if subject.HasField("result") else None
        return verify(record, events, result)
    raise wire.WireError("VerifyReplayRequest needs a record or a replay")


def verify_serialized(request: bytes) -> bytes:
    """VerifyReplay on a serialized request, answered serialized: what the engine's
    verification processes run (engine/verify_pool.py; this module imports no gRPC)."""
    response = verify_request(engine_pb2.VerifyReplayRequest.FromString(request))
    # The difference may quote the (caller's) replay: keep it short and printable.
    response.first_difference = text.clean(response.first_difference, text.MESSAGE_MAX)
    return response.SerializeToString()
