"""Stopping the servers a benchmark started: the one way every benchmark does it."""

from __future__ import annotations

import signal
import subprocess
from typing import Any


def stop(procs: list[subprocess.Popen[Any]]) -> None:
    """SIGTERM every server (a graceful shutdown), then kill those still running after 10 s."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(5)
