"""Real processes on loopback for the runner tests: the engine server and bots.

Every process binds port 0 and reports its port through a file (no guessed
free ports, no races); every wait is bounded; every process started here is
killed at the end of its fixture, by its own handle.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVING = Path(__file__).resolve().parent / "misbehaving"
START_TIMEOUT_S = 20.0


@dataclass
class Proc:
    """A started server process and the address it listens on."""

    proc: subprocess.Popen[bytes]
    address: str
    log_path: Path

    def alive(self) -> bool:
        return self.proc.poll() is None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 5.0) -> int:
        """Signal the process and wait for it (SIGKILL if it does not exit in time)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout_s)
        return self.proc.returncode


def wait_healthy(address: str, service: str, timeout_s: float = START_TIMEOUT_S) -> None:
    """Poll grpc.health.v1 until SERVING (bounded)."""
    deadline = time.monotonic() + timeout_s
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1.0)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{address} ({service}) not healthy within {timeout_s} s")
            time.sleep(0.05)


def start(args: list[str], tmp: Path, name: str, *, health_service: str | None = None) -> Proc:
    """Start `python args... --listen 127.0.0.1:0 --port-file F`; wait for its port (+ health)."""
    port_file = tmp / f"{name}.port"
    log_path = tmp / f"{name}.log"
    port_file.unlink(missing_ok=True)
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            [sys.executable, *args, "--listen", "127.0.0.1:0", "--port-file", str(port_file)],
            cwd=ROOT,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while not (port_file.exists() and port_file.read_text().strip()):
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}: {log_path.read_text()}")
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait(5)
            raise TimeoutError(f"{name} did not report a port within {START_TIMEOUT_S} s")
        time.sleep(0.02)
    address = f"127.0.0.1:{int(port_file.read_text())}"
    p = Proc(proc, address, log_path)
    if health_service is not None:
        try:
            wait_healthy(address, health_service)
        except TimeoutError:
            p.stop(signal.SIGKILL)
            raise
    return p


def start_engine(tmp: Path, name: str = "engine") -> Proc:
    return start(
        ["-m", "engine.server", "--log-level", "WARNING"],
        tmp,
        name,
        health_service="digdown.v1.Engine",
    )


def start_bot(
    module_or_script: str, tmp: Path, name: str, *extra: str, grpc_bot: bool = True
) -> Proc:
    """A bot by module (`bots.random_bot`) or by script in tests/runner/misbehaving/."""
    if module_or_script.endswith(".py"):
        args = [str(MISBEHAVING / module_or_script), *extra]
    else:
        args = ["-m", module_or_script, *extra]
    return start(args, tmp, name, health_service="digdown.v1.Bot" if grpc_bot else None)


@pytest.fixture(scope="session")
def procdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("procs")


@pytest.fixture(scope="session")
def engine(procdir: Path) -> Iterator[Proc]:
    p = start_engine(procdir)
    yield p
    p.stop()


@pytest.fixture(scope="session")
def random_bots(procdir: Path) -> Iterator[list[Proc]]:
    """Three well-behaved random bots (each serves any number of games)."""
    bots = [start_bot("bots.random_bot", procdir, f"random{i}", "--seed", str(i)) for i in range(3)]
    yield bots
    for b in bots:
        b.stop()


def closed_port_address() -> str:
    """An address where nothing listens (bound then released: refused on connect)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"127.0.0.1:{port}"
