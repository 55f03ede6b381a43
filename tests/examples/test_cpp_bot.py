"""examples/cpp: a bot written in C++ from protos/ alone (Debian's gRPC) plays a full
match as a served bot (the ladder dials it). Its connect-out mode plays on the ladder in
tests/ladder/grpc/connected/test_connected_play.py. `.ci/run` installs the packages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cpp_example import cpp_bot
from tests.support.matches import play
from tests.support.processes import BOT_SERVICE, Proc, start

pytestmark = pytest.mark.timeout(1500)  # the first build of the example included


@pytest.fixture(scope="module")
def served_cpp(procdir: Path) -> Iterator[Proc]:
    binary = cpp_bot()
    p = start([], procdir, "cpp-bot", program=str(binary), health_service=BOT_SERVICE)
    yield p
    assert p.stop() == 0, p.log()
    assert "stopping" in p.log()


def test_the_cpp_example_plays_a_full_match_served(
    engine: Proc, served_cpp: Proc, random_bots: list[Proc]
) -> None:
    bots = [served_cpp.address, *(b.address for b in random_bots)]
    outcome = play(engine, bots, 13, "--verify")
    assert outcome["faults"] == []
    assert outcome["verified"] is True
    assert outcome["seats"][0]["bot"] == "cpp-random"
    assert outcome["seats"][0]["protocol_version"] == 1  # it chose unary Act
    assert outcome["result"]["seats"][0]["faults"] == 0
