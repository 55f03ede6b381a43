"""Real server processes on loopback for the tests: engine, bots, ``manage.py`` servers.

Every process binds port 0 and reports its port through a file (no guessed
free ports, no races); every wait is bounded; every process started here is
stopped through its own handle (SIGTERM, then SIGKILL), never by name.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from digdown.healthcheck import wait_until_serving

ROOT = Path(__file__).resolve().parents[2]
MISBEHAVING = ROOT / "tests" / "workers" / "runner" / "misbehaving"
START_TIMEOUT_S = 20.0
# Headless Chromium that reaches for no network on its own and resolves only loopback.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
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


def start_runserver(
    env: Mapping[str, str],
    tmp: Path,
    name: str = "runserver",
    *,
    setup: Sequence[Sequence[str]] = (("migrate", "-v0"),),
    probe: str = "/",
    timeout_s: float = 30.0,
) -> Proc:
    """``manage.py runserver`` as an operator starts it: SETUP commands first, then the server.

    Waited on until PROBE answers 200 (a process that exits or a deadline passed
    raises RuntimeError with its log). ``address`` is ``127.0.0.1:port``.
    """
    manage = [sys.executable, str(ROOT / "manage.py")]
    for command in setup:
        subprocess.run([*manage, *command], env=env, cwd=ROOT, check=True, timeout=120)
    address = closed_port_address()
    log_path = tmp / f"{name}.log"
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            [*manage, "runserver", "--noreload", address],
            env=dict(env), cwd=ROOT, stdout=log_file, stderr=subprocess.STDOUT,
        )  # fmt: skip
    server = Proc(proc, address, log_path)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"http://{address}{probe}", timeout=2) as reply:
                if reply.status == 200:
                    return server
        except OSError:
            pass
        if not server.alive() or time.monotonic() > deadline:
            server.stop(signal.SIGKILL)
            raise RuntimeError(f"{name} did not come up: {server.log()}")
        time.sleep(0.2)


def chromium_path() -> str:
    """Debian's Chromium (never a downloaded browser); a skip without it, a failure in CI."""
    import pytest

    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed; .ci/run installs it")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return path
