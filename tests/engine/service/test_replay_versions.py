"""Replays across engine versions, through a real engine's VerifyReplay.

`replays/dd-1-hardcore-4.replay.json.gz` is a replay file as the match runner
writes it, made by digdown-engine/0.1.0 before the rules core was rewritten
(4 seats, hardcore, faults and a third-fault forfeit). It must verify for as
long as dd-1 exists.
"""

from __future__ import annotations

from pathlib import Path

from digdown.v1 import engine_pb2
from engine.rules import ENGINE_VERSION
from workers.runner import replay as replay_file

from .conftest import CALL_TIMEOUT, EngineProcess

OLD_REPLAY = Path(__file__).with_name("replays") / "dd-1-hardcore-4.replay.json.gz"


def _verify(engine: EngineProcess, doc: dict) -> engine_pb2.VerifyReplayResponse:
    request = engine_pb2.VerifyReplayRequest(replay=replay_file.replay_to_proto(doc))
    return engine.stub.VerifyReplay(request, timeout=CALL_TIMEOUT)


def test_an_old_dd1_replay_still_verifies(engine: EngineProcess) -> None:
    doc = replay_file.read(OLD_REPLAY)
    assert doc["ruleset"] == "dd-1" and doc["engine_version"] == "digdown-engine/0.1.0"
    assert any("fault" in d for d in doc["decisions"])
    assert any(e["kind"] == "FORFEIT" for e in doc["events"])
    verdict = _verify(engine, doc)
    assert verdict.ok, verdict.first_difference
    assert verdict.num_events == len(doc["events"])


def test_a_difference_under_another_version_names_both_versions(engine: EngineProcess) -> None:
    doc = replay_file.read(OLD_REPLAY)
    doc["engine_version"] = "digdown-engine/0.0.9"
    assert _verify(engine, doc).ok, "another version alone is no difference"

    doc["result"]["winner"] = 3
    verdict = _verify(engine, doc)
    assert not verdict.ok
    assert verdict.first_difference.startswith(
        f"recorded by digdown-engine/0.0.9, re-simulated by {ENGINE_VERSION} "
        "(engine version mismatch): result differs: winner"
    ), verdict.first_difference


def test_a_difference_under_the_same_version_says_nothing_of_versions(
    engine: EngineProcess,
) -> None:
    doc = replay_file.read(OLD_REPLAY)
    doc["engine_version"] = ENGINE_VERSION
    doc["events"][5]["kind"] = "DONE"
    verdict = _verify(engine, doc)
    assert not verdict.ok and verdict.event_index == 5
    assert "version" not in verdict.first_difference


def test_a_record_of_an_unknown_ruleset_says_so_and_names_the_versions(
    engine: EngineProcess,
) -> None:
    doc = replay_file.read(OLD_REPLAY)
    doc["ruleset"] = doc["config"]["ruleset"] = "dd-99"
    doc["engine_version"] = "digdown-engine/9.0.0"
    verdict = _verify(engine, doc)
    assert not verdict.ok
    assert "recorded by digdown-engine/9.0.0" in verdict.first_difference
    assert "unknown ruleset 'dd-99'" in verdict.first_difference
