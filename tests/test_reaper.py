"""A test run stopped from outside leaves no process behind (tests/support/reaper.py).

A real inner pytest run starts a server-like process in a session of its own
and never stops it; the run is then stopped as a CI time limit stops it
(SIGTERM) or ends normally. Whatever way it ends, the process is gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LEAKY_TEST = textwrap.dedent(
    """
    import os, subprocess, sys, time
    from pathlib import Path

    def test_leaks_a_process_group():
        # a "server" with a child of its own, in a group of its own, never stopped
        proc = subprocess.Popen(
            [sys.executable, "-c",
             "import subprocess, sys, time; "
             "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)']); "
             "time.sleep(600)"],
            start_new_session=True,
        )
        Path(os.environ["PIDFILE"]).write_text(str(proc.pid))
        if os.environ.get("HANG") == "1":
            time.sleep(600)
    """
)


def run_inner(tmp_path: Path, *, hang: bool) -> tuple[subprocess.Popen[bytes], int]:
    (tmp_path / "test_leaky.py").write_text(LEAKY_TEST)
    (tmp_path / "conftest.py").write_text(
        "from tests.support import reaper\n"
        "def pytest_configure(config):\n    reaper.stop_on_sigterm()\n"
        "def pytest_unconfigure(config):\n    reaper.reap()\n"
    )
    pidfile = tmp_path / "pid"
    env = {
        **os.environ,
        "PIDFILE": str(pidfile),
        "HANG": "1" if hang else "0",
        "PYTHONPATH": str(ROOT),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:xdist",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            str(tmp_path / "test_leaky.py"),
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while not pidfile.exists() or not pidfile.read_text():
        assert proc.poll() is None or pidfile.exists(), proc.stdout.read() if proc.stdout else ""
        assert time.monotonic() < deadline, "the inner run never started its process"
        time.sleep(0.05)
    return proc, int(pidfile.read_text())


def group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs (a zombie waiting for its parent, here a
    container's init that reaps when it pleases, is gone for this purpose)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        state, _ppid, group = text[text.rindex(")") + 2 :].split()[:3]
        if int(group) == pgid and state != "Z":
            return True
    return False


@pytest.mark.parametrize("hang", [True, False], ids=["stopped by SIGTERM", "ended normally"])
def test_nothing_outlives_the_run(tmp_path: Path, hang: bool) -> None:
    proc, leaked = run_inner(tmp_path, hang=hang)
    if hang:
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=60)
        assert not group_alive(leaked), "the leaked process group outlived the run"
    finally:
        if group_alive(leaked):
            os.killpg(leaked, signal.SIGKILL)
