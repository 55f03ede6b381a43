"""Start a gRPC server as a subprocess on a free port and wait until it serves.

The one way the project starts its own servers (a local engine for a worker or
the one-match CLI, and every server the tests need): the process binds port 0
and reports the port through a file written atomically (no guessed free ports,
no races), is waited on through its health service, and is stopped through
its own handle (SIGTERM, then SIGKILL), never by name. Every wait is bounded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from digdown.healthcheck import wait_until_serving

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_S = 20.0


@dataclass
class ServerProcess:
    """A started server process and the address it listens on."""

    proc: subprocess.Popen[bytes]
    address: str
    log_path: Path

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    @property
    def pid(self) -> int:
        return self.proc.pid

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
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        return self.proc.returncode


def default_env() -> dict[str, str]:
    """A server subprocess's environment: this one, the project importable, no buffering."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1"}


def start_server(
    args: Sequence[str],
    tmp: Path,
    name: str,
    *,
    health_service: str | None = None,
    env: Mapping[str, str] | None = None,
    listen: str = "127.0.0.1:0",
    timeout_s: float = START_TIMEOUT_S,
    stdin: int | IO[bytes] | None = subprocess.DEVNULL,
    program: str = sys.executable,
) -> ServerProcess:
    """Start ``python ARGS --listen LISTEN --port-file F``; wait for its port (+ health).

    ``program`` runs instead of this Python (a bot in another language, a fresh venv's).

    A process that exits before it reports a port raises RuntimeError with its
    log (so a caller can show what the server said); one that is too slow,
    TimeoutError (it is killed).
    """
    port_file = tmp / f"{name}.port"
    log_path = tmp / f"{name}.log"
    port_file.unlink(missing_ok=True)
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            [program, *args, "--listen", listen, "--port-file", str(port_file)],
            cwd=ROOT,
            stdin=stdin,
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
    server = ServerProcess(proc, f"{host}:{int(port_file.read_text())}", log_path)
    if health_service is not None:
        try:
            wait_until_serving(
                server.address,
                health_service,
                max(0.1, deadline - time.monotonic()),
                alive=server.alive,
            )
        except OSError as exc:
            server.stop(signal.SIGKILL)
            raise TimeoutError(f"{name}: {exc}\n{server.log()}") from None
    return server
