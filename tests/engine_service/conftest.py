"""A real engine server in a subprocess on loopback, as production runs it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from protos.digdown.v1 import engine_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
CALL_TIMEOUT = 10.0  # every client call has a deadline (pitfall G1)


@dataclass
class EngineProcess:
    proc: subprocess.Popen[bytes]
    port: int
    log_path: Path
    channel: grpc.Channel
    stub: engine_pb2_grpc.EngineStub

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def health(self, service: str = "") -> int:
        stub = health_pb2_grpc.HealthStub(self.channel)
        request = health_pb2.HealthCheckRequest(service=service)
        return stub.Check(request, timeout=CALL_TIMEOUT).status


def start_engine(tmp: Path, *extra: str, listen: str = "127.0.0.1:0") -> EngineProcess:
    """Start `python -m engine.server` and wait until its health service says SERVING."""
    port_file = tmp / "engine.port"
    log_path = tmp / "engine.log"
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "engine.server", "--listen", listen, "--port-file",
             str(port_file), "--grace", "2", *extra],
            cwd=ROOT,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )  # fmt: skip
    deadline = time.monotonic() + 20
    while not port_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"engine did not start:\n{log_path.read_text()}")
        time.sleep(0.05)
    port = int(port_file.read_text())
    assert port != 0
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    engine = EngineProcess(proc, port, log_path, channel, engine_pb2_grpc.EngineStub(channel))
    while True:
        try:
            if engine.health() == health_pb2.HealthCheckResponse.SERVING:
                return engine
        except grpc.RpcError:
            pass
        if time.monotonic() > deadline:
            stop_engine(engine)
            raise RuntimeError(f"engine never became healthy:\n{engine.log()}")
        time.sleep(0.05)


def stop_engine(engine: EngineProcess) -> None:
    engine.channel.close()
    if engine.proc.poll() is None:
        engine.proc.terminate()
        try:
            engine.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            engine.proc.kill()
            engine.proc.wait(timeout=10)


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
