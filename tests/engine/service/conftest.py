"""A real engine server in a subprocess on loopback, as production runs it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from digdown.healthcheck import status
from digdown.v1 import engine_pb2_grpc
from tests.support import processes

CALL_TIMEOUT = 10.0  # every client call has a deadline: a dead server fails, never hangs


@dataclass
class EngineProcess(processes.Proc):
    """An engine process with a channel and an Engine stub to call it."""

    channel: grpc.Channel
    stub: engine_pb2_grpc.EngineStub

    def health(self, service: str = "") -> int | None:
        return status(self.channel, service, CALL_TIMEOUT)


def start_engine(tmp: Path, *extra: str, listen: str = "127.0.0.1:0") -> EngineProcess:
    """Start `python -m engine.server` and wait until its health service says SERVING."""
    p = processes.start_engine(
        tmp, "engine", "--grace", "2", *extra, listen=listen, log_level="INFO"
    )
    channel = grpc.insecure_channel(p.address)
    return EngineProcess(
        p.proc, p.address, p.log_path, channel, engine_pb2_grpc.EngineStub(channel)
    )


def stop_engine(engine: EngineProcess) -> None:
    engine.channel.close()
    engine.stop(timeout_s=10)


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EngineProcess]:
    """One engine per test module (its games are independent)."""
    proc = start_engine(tmp_path_factory.mktemp("engine"))
    yield proc
    stop_engine(proc)


@pytest.fixture
def fresh_engine(tmp_path: Path) -> Iterator[EngineProcess]:
    """An engine of one's own, for tests that stop it or tune it."""
    proc = start_engine(tmp_path, "--idle-timeout", "0.5")
    yield proc
    stop_engine(proc)
