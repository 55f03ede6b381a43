"""Real server processes on loopback for the tests: engine, bots, ``manage.py grpcserver``.

How a server is started, waited on and stopped is ``workers.server_process``
(the product starts its local engines the same way): port 0 and a port file,
bounded waits, stopped through its own handle, never by name.
"""

from __future__ import annotations

import socket
from pathlib import Path

from workers.server_process import ROOT, START_TIMEOUT_S, ServerProcess, default_env
from workers.server_process import start_server as start

MISBEHAVING = ROOT / "tests" / "workers" / "runner" / "misbehaving"
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
