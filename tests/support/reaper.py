"""Every process a test run started ends with the run, however the run ends.

Tests start real servers, Celery workers, bots and browsers, most of them in
process groups of their own. A fixture's teardown stops each one; this is the
net under them for the runs that do not get that far: a test run stopped by a
time limit (SIGTERM), an interrupted one (Ctrl-C), a fixture whose teardown
raised. At the end of the run every process still descended from this one is
sent SIGTERM (with its process group, where it leads one), given a grace, then
SIGKILL. Only descendants are touched: another test run beside this one, or a
developer's ``make run``, is never signalled.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path
from types import FrameType

GRACE_S = 5.0


def parents() -> dict[int, int]:
    """pid -> parent pid of every process this user can see."""
    found: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        # The command name (field 2) may hold spaces and parentheses: read after its last ')'.
        fields = stat[stat.rindex(")") + 2 :].split()
        found[int(entry.name)] = int(fields[1])
    return found


def descendants(root: int) -> list[int]:
    """Every living process below ROOT, parents before their children."""
    children: dict[int, list[int]] = {}
    for pid, ppid in parents().items():
        children.setdefault(ppid, []).append(pid)
    order: list[int] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop(0)
        order.append(pid)
        todo.extend(children.get(pid, []))
    return order


def _signal(pids: Iterable[int], sig: int) -> None:
    own_group = os.getpgrp()
    for pid in pids:
        try:
            group = os.getpgid(pid)
            if group == pid and group != own_group:
                os.killpg(group, sig)  # a group leader: its whole group (pool children included)
            else:
                os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _collect_zombies() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def reap(root: int | None = None, grace_s: float = GRACE_S) -> list[int]:
    """Stop every descendant of ROOT (this process); returns the pids that were left."""
    root = os.getpid() if root is None else root
    left = descendants(root)
    if not left:
        return []
    _signal(left, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        _collect_zombies()
        alive = [pid for pid in left if Path(f"/proc/{pid}").exists() and not _zombie(pid)]
        if not alive:
            return left
        time.sleep(0.1)
    _signal(descendants(root) or left, signal.SIGKILL)
    _collect_zombies()
    return left


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] == "Z"


def stop_on_sigterm() -> None:
    """SIGTERM and SIGHUP end the run as Ctrl-C does: teardowns run, then ``reap``."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt(f"signal {signal.Signals(signum).name}")

    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, interrupt)
