"""ENGINE_ADDRESS forms and how games are spread over several engines (no network needed)."""

from __future__ import annotations

import pytest

from workers.runner import EngineAddressError, EnginePool
from workers.runner.engines import parse_targets, resolve


def test_forms_of_engine_address() -> None:
    assert parse_targets("a:1, dns:///b:2,,[::1]:3") == ["a:1", "b:2", "[::1]:3"]
    assert parse_targets(["unix:/run/engine.sock"]) == ["unix:/run/engine.sock"]
    for bad in ("", " , ", "nohost", "a:", ":5", "a:port", "a:70000"):
        with pytest.raises(EngineAddressError):
            parse_targets(bad)


def test_a_name_names_every_address_it_resolves_to() -> None:
    assert "127.0.0.1:50051" in resolve("localhost:50051")
    assert resolve("127.0.0.1:7") == ["127.0.0.1:7"]
    assert resolve("unix:/x.sock") == ["unix:/x.sock"]
    # Unresolvable now: kept as is, so gRPC reports it like any unreachable engine.
    assert resolve("no-such-host.invalid:1") == ["no-such-host.invalid:1"]


def test_games_are_spread_in_turn_and_each_process_has_its_own_channels() -> None:
    pool = EnginePool("127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", first=0)
    firsts = [pool.addresses()[0] for _ in range(6)]
    assert firsts == ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"] * 2
    # Every game may fall back on every engine, in turn after its first choice.
    assert sorted(pool.addresses()) == ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]
    channel = pool.channel("127.0.0.1:1")
    assert pool.channel("127.0.0.1:1") is channel  # reused, not one per game
    pool.close()
