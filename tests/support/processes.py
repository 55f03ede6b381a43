"""Real server processes on loopback for the tests: engine, bots, ``manage.py grpcserver``.

Every process binds port 0 and reports its port through a file (no guessed
free ports, no races); every wait is bounded; every process started here is
stopped through its own handle (SIGTERM, then SIGKILL), never by name.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from digdown.healthcheck import wait_until_serving

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVING = ROOT / "tests" / "workers" / "runner" / "misbehaving"
START_TIMEOUT_S = 20.0
ENGINE_SERVICE = "digdown.v1.Engine"
BOT_SERVICE = "digdown.v1.Bot"


@dataclass
class Proc:
    """A started server process and the address it listens on."""

    proc: subprocess.Popen[bytes]
    address: str
    log_path: Path

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

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


def default_env() -> dict[str, str]:
    """The environment of a server subprocess: this one, the repo importable, no buffering."""
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}


def start(
    args: Sequence[str],
    tmp: Path,
    name: str,
    *,
    health_service: str | None = None,
    env: Mapping[str, str] | None = None,
    listen: str = "127.0.0.1:0",
    timeout_s: float = START_TIMEOUT_S,
    program: str = sys.executable,
) -> Proc:
    """Start ``python ARGS --listen LISTEN --port-file F``; wait for its port (+ health).

    ``program`` runs instead of this Python (a bot in another language, a fresh venv's).

    A process that exits before it reports a port raises RuntimeError with its
    log (so a test can match what the server said); one that is too slow,
    TimeoutError.
    """
    port_file = tmp / f"{name}.port"
    log_path = tmp / f"{name}.log"
    port_file.unlink(missing_ok=True)
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            [program, *args, "--listen", listen, "--port-file", str(port_file)],
            cwd=ROOT,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            env=dict(env) if env is not None else default_env(),
        )
    deadline = time.monotonic() + timeout_s
    while not (port_file.exists() and port_file.read_text().strip()):
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode}: {log_path.read_text()}")
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait(5)
            raise TimeoutError(f"{name} did not report a port within {timeout_s} s")
        time.sleep(0.02)
    host = listen.rsplit(":", 1)[0]
    p = Proc(proc, f"{host}:{int(port_file.read_text())}", log_path)
    if health_service is not None:
        try:
            wait_until_serving(
                p.address, health_service, max(0.1, deadline - time.monotonic()), alive=p.alive
            )
        except OSError as exc:
            p.stop(signal.SIGKILL)
            raise TimeoutError(f"{name}: {exc}\n{p.log()}") from None
    return p


def start_engine(
    tmp: Path,
    name: str = "engine",
    *extra: str,
    listen: str = "127.0.0.1:0",
    log_level: str = "WARNING",
) -> Proc:
    """``python -m engine.server EXTRA``, waited on until it serves digdown.v1.Engine.

    Quiet by default (warnings only); tests that read the engine's log ask for INFO.
    """
    return start(
        ["-m", "engine.server", "--log-level", log_level, *extra],
        tmp,
        name,
        health_service=ENGINE_SERVICE,
        listen=listen,
    )


def start_bot(
    module_or_script: str, tmp: Path, name: str, *extra: str, grpc_bot: bool = True
) -> Proc:
    """A bot by module (`examples.random_bot`) or by script in tests/workers/runner/misbehaving/.

    ``grpc_bot=False`` is for a "bot" without a health service: only its port is waited on.
    """
    if module_or_script.endswith(".py"):
        args = [str(MISBEHAVING / module_or_script), *extra]
    else:
        args = ["-m", module_or_script, *extra]
    return start(args, tmp, name, health_service=BOT_SERVICE if grpc_bot else None)


def closed_port_address() -> str:
    """An address where nothing listens (bound then released: refused on connect)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"127.0.0.1:{port}"
