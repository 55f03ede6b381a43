"""Real server processes on loopback for the tests: engine, bots, ``manage.py`` servers.

How a server is started, waited on and stopped is ``workers.server_process``
(the product starts its local engines the same way): port 0 and a port file,
bounded waits, stopped through its own handle, never by name.
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
from pathlib import Path

from workers.server_process import ROOT, START_TIMEOUT_S, ServerProcess, default_env
from workers.server_process import start_server as start

MISBEHAVING = ROOT / "tests" / "workers" / "runner" / "misbehaving"
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
Proc = ServerProcess

__all__ = ["ROOT", "START_TIMEOUT_S", "Proc", "default_env", "start"]


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
    command = [*manage, "runserver", "--noreload", address]
    return _serve_http(command, env, address, tmp, name, probe=probe, timeout_s=timeout_s)


def start_gunicorn(
    env: Mapping[str, str],
    tmp: Path,
    name: str = "gunicorn",
    *,
    workers: int = 2,
    probe: str = "/api/schema/",
    timeout_s: float = 60.0,
) -> Proc:
    """The production WSGI server as compose runs it: gunicorn with ``ladder/gunicorn.conf.py``
    serving ``ladder.wsgi:application`` on a loopback port (``LADDER_WEB_BIND``).

    Waited on until PROBE answers 200; stopped through its handle (SIGTERM to the
    master, which stops its workers).
    """
    address = closed_port_address()
    env = {**env, "LADDER_WEB_BIND": address, "LADDER_WEB_WORKERS": str(workers)}
    command = [
        sys.executable, "-m", "gunicorn", "-c", str(ROOT / "ladder" / "gunicorn.conf.py"),
        "ladder.wsgi:application",
    ]  # fmt: skip
    return _serve_http(command, env, address, tmp, name, probe=probe, timeout_s=timeout_s)


def _serve_http(
    command: Sequence[str],
    env: Mapping[str, str],
    address: str,
    tmp: Path,
    name: str,
    *,
    probe: str,
    timeout_s: float,
) -> Proc:
    """Start an HTTP server process and wait (bounded) until PROBE answers 200."""
    log_path = tmp / f"{name}.log"
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            list(command), env=dict(env), cwd=ROOT, stdout=log_file, stderr=subprocess.STDOUT,
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
