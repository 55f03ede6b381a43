"""A rules engine owned by one process, for when no ENGINE_ADDRESS is configured.

A worker process (or the one-match CLI, or ``manage.py playmatch``) without an
engine address starts its own ``python -m workers.local_engine`` on a free
port the first time it needs one, reuses it for every later match, and stops
it when it exits. The engine's stdin is a pipe from its owner: when the owner
dies in any way, SIGKILL included, the kernel closes the pipe and the engine
stops itself, so a killed worker never leaves an engine behind.

    python -m workers.local_engine --listen 127.0.0.1:0 --port-file F   # what is run
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from workers.server_process import ServerProcess, start_server

log = logging.getLogger("workers.local_engine")

ENGINE_SERVICE = "digdown.v1.Engine"
DIR_PREFIX = "digdown-engine-"  # + owner pid + "-": a dead owner's folder is swept later


def sweep_orphaned_dirs() -> list[Path]:
    """Remove the folders (port file, log) of local engines whose owner was killed.

    An owner killed with SIGKILL cannot clean up; its engine stops by itself, and
    the next local engine started on this machine removes what is left.
    """
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{DIR_PREFIX}*-*"):
        owner = folder.name[len(DIR_PREFIX) :].split("-", 1)[0]
        if not owner.isdigit() or _alive(int(owner)):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def _stop_when_stdin_closes() -> None:
    """Wait for EOF on stdin (the owner is gone), then stop gracefully like on SIGTERM.

    Reads the raw descriptor: a daemon thread blocked in a *buffered* read
    makes the interpreter abort at exit (it cannot take the buffer's lock).
    """
    try:
        while os.read(0, 4096):
            pass
    finally:
        os.kill(os.getpid(), signal.SIGTERM)


def main(argv: Sequence[str] | None = None) -> int:
    from engine import server

    threading.Thread(target=_stop_when_stdin_closes, name="owner-watch", daemon=True).start()
    return server.main(argv)


def start_local_engine(tmp: Path, *, log_level: str = "WARNING") -> ServerProcess:
    """Start an engine tied to this process (see the module docstring) and wait until it serves."""
    return start_server(
        ["-m", "workers.local_engine", "--log-level", log_level],
        tmp,
        "engine",
        health_service=ENGINE_SERVICE,
        stdin=subprocess.PIPE,
    )


class LocalEngine:
    """This process's engine: started on first use, stopped at exit (or with the process)."""

    def __init__(self) -> None:
        self._server: ServerProcess | None = None
        self._tmp: Path | None = None
        self._pid = os.getpid()
        self._lock = threading.Lock()
        atexit.register(self.stop)

    def address(self) -> str:
        with self._lock:
            if os.getpid() != self._pid:  # a forked child: the engine belongs to the parent
                self._server, self._tmp, self._pid = None, None, os.getpid()
            if self._server is not None and self._server.alive():
                return self._server.address
            self._stop_locked()
            sweep_orphaned_dirs()
            self._tmp = Path(tempfile.mkdtemp(prefix=f"{DIR_PREFIX}{os.getpid()}-"))
            self._server = start_local_engine(self._tmp)
            log.info("local engine on %s (pid %d)", self._server.address, self._server.pid)
            return self._server.address

    def stop(self) -> None:
        with self._lock:
            if os.getpid() == self._pid:
                self._stop_locked()

    def _stop_locked(self) -> None:
        server, tmp, self._server, self._tmp = self._server, self._tmp, None, None
        if server is not None:
            server.stop()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


@contextmanager
def engine_for(address: str | None) -> Iterator[str]:
    """``address`` if given, else a local engine for the duration of the block."""
    if address:
        yield address
        return
    engine = LocalEngine()
    try:
        yield engine.address()
    finally:
        engine.stop()


if __name__ == "__main__":
    sys.exit(main())
