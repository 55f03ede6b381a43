"""The engine service says which build of the rules core it runs: at start-up, and with
GetRuleset (metadata `digdown-rules-build`)."""

from __future__ import annotations

from digdown.v1 import game_pb2
from engine.rules import BUILD
from tests.engine.service.conftest import CALL_TIMEOUT, EngineProcess


def test_the_engine_names_its_rules_build(engine: EngineProcess) -> None:
    _reply, call = engine.stub.GetRuleset.with_call(
        game_pb2.GetRulesetRequest(), timeout=CALL_TIMEOUT
    )
    assert ("digdown-rules-build", BUILD) in tuple(call.initial_metadata())
    log = engine.log_path.read_text()
    assert f"rules core: {BUILD} build" in log
    # and how grpc core does its I/O (digdown.game_io)
    assert "grpc I/O: polled by the waiting thread" in log
