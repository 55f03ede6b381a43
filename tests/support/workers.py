"""Real ``celery worker`` processes for the tests, and the /proc helpers to watch them.

A worker runs in a session of its own (its process group is ours to kill if a
warm shutdown hangs); it is waited on until its log says it is ready, and
stopped through its own handle. Every wait is bounded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.processes import ROOT

START_TIMEOUT_S = 60.0


def wait_until(check: Callable[[], Any], timeout_s: float, what: str, poll_s: float = 0.1) -> Any:
    """Poll ``check`` until it returns something truthy; fail with ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout_s} s: {what}")
        time.sleep(poll_s)


def children_of(pid: int) -> set[int]:
    """Live processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@dataclass
class Worker:
    """One ``celery worker`` (main process + pool children)."""

    proc: subprocess.Popen[bytes]
    log_path: Path
    name: str

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def children(self) -> set[int]:
        return children_of(self.proc.pid)

    def stop(self, timeout_s: float = 30.0) -> int:
        """Warm shutdown (SIGTERM); SIGKILL of its process group if it does not exit in time."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)  # the group we started, by its id
                self.proc.wait(10)
        return self.proc.returncode


def start_worker(
    env: Mapping[str, str],
    tmp: Path,
    name: str,
    *,
    concurrency: int = 1,
    beat: bool = False,
) -> Worker:
    """``celery -A workers.celery_app worker``; waits until it says it is ready."""
    log_path = tmp / f"{name}.log"
    args = [sys.executable, "-m", "celery", "-A", "workers.celery_app", "worker",
            "-c", str(concurrency), "-n", f"{name}@%h", "-l", "INFO", "--without-mingle",
            "--without-gossip"]  # fmt: skip
    if beat:
        args += ["-B", "-s", str(tmp / f"{name}-beat-schedule")]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            args, cwd=ROOT, env=dict(env), stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    worker = Worker(proc, log_path, name)
    try:
        wait_until(
            lambda: " ready." in worker.log() or proc.poll() is not None,
            START_TIMEOUT_S,
            f"worker {name} ready",
        )
    except AssertionError:
        worker.stop()
        raise
    assert proc.poll() is None, worker.log()
    return worker
