"""A ``redis-server`` of a test's (or a benchmark's) own, on a unix socket in its folder.

Without persistence, so killing and restarting it loses every message, as a
Redis without ``appendonly`` does in production; nobody else's Redis is
touched. Under ``CI=true`` a missing ``redis-server`` fails instead of skipping.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest


class RedisServer:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.socket = folder / "redis.sock"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"redis+socket://{self.socket}"

    def start(self, timeout_s: float = 10.0) -> None:
        if shutil.which("redis-server") is None:
            if os.environ.get("CI") == "true":
                pytest.fail("redis-server is not installed (CI must run the Redis drills)")
            pytest.skip("redis-server is not installed")
        self.starts += 1
        with (self.folder / f"redis-{self.starts}.log").open("wb") as log:
            self.proc = subprocess.Popen(
                ["redis-server", "--port", "0", "--unixsocket", str(self.socket),
                 "--save", "", "--appendonly", "no", "--dir", str(self.folder)],
                stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + timeout_s
        while not self.socket.exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"redis-server did not start (exit {self.proc.poll()})")
            time.sleep(0.02)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self.socket.unlink(missing_ok=True)
