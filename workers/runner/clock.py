"""What one decision costs a seat: wall time, CPU time, and which of them is charged.

A hosted bot on a busy machine answers later than it would alone: a CPU-bound
neighbour holds the core while the bot's thread waits to run. Charged wall
time, it pays for the neighbour. Where the sandbox measures a seat's use of the
CPU (``BotSpec.cpu_usage``: the CPU time of its processes, and the time their
threads spent runnable but waiting for a CPU, from the kernel's scheduler
statistics) and the time control says ``hosted_clock="cpu"``, the seat is
charged its wall time *minus the time it waited for a CPU* (and minus the
runner's own thread's wait for one, once the answer is in), never less than
its CPU time: what it spent computing, sleeping or blocking is its own; what
the machine kept it waiting is not. A bot that sleeps still pays for its sleep.
The call's wall deadline is widened by ``cpu_wall_factor`` (the generous wall
cap), so a starved bot is not cut off at its charged budget. Other seats
(remote, connected) are charged wall time: their CPU is not ours to measure.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

from workers.runner.terms import CpuUsage, TimeControl

__all__ = ["CpuUsage", "DecisionClock", "charged_seconds", "own_wait_seconds"]


def own_wait_seconds() -> float:
    """How long this thread has waited runnable for a CPU (0 where the kernel does not say).

    The runner's own thread, after the bot's answer arrived, may wait for a CPU on a
    busy worker too: that is the machine's delay, not the bot's.
    """
    tid = threading.get_native_id()
    path = f"/proc/self/task/{tid}/schedstat"
    with contextlib.suppress(OSError, ValueError, IndexError), open(path) as fh:
        return int(fh.read().split()[1]) / 1e9
    return 0.0


def charged_seconds(wall_s: float, cpu_s: float, waited_s: float) -> float:
    """The CPU clock's charge: wall time without the waits for a CPU, at least the CPU time."""
    return max(cpu_s, wall_s - min(max(0.0, waited_s), wall_s))


class DecisionClock:
    """Started when a decision is asked; ``stop`` gives the charged seconds."""

    def __init__(self, cpu_usage: Callable[[], CpuUsage | None] | None, tc: TimeControl) -> None:
        self._cpu_usage = cpu_usage
        self.by_cpu = cpu_usage is not None and tc.hosted_clock == "cpu"
        self.factor = max(1.0, tc.cpu_wall_factor)
        self._start = cpu_usage() if cpu_usage is not None else None
        self._own_wait = own_wait_seconds() if self.by_cpu else 0.0
        self._started = time.monotonic()
        self.wall_s = 0.0
        self.cpu_s: float | None = None
        self.waited_s: float | None = None

    def wall_timeout(self, budget_s: float) -> float:
        """The call's wall deadline for a charged budget of ``budget_s``."""
        return budget_s * self.factor if self.by_cpu else budget_s

    def stop(self) -> float:
        self.wall_s = time.monotonic() - self._started
        own_wait = own_wait_seconds() - self._own_wait if self.by_cpu else 0.0
        if self._cpu_usage is not None and self._start is not None:
            now = self._cpu_usage()
            if now is not None:
                self.cpu_s = max(0.0, now[0] - self._start[0])
                self.waited_s = max(0.0, now[1] - self._start[1]) + max(0.0, own_wait)
        if self.by_cpu and self.cpu_s is not None and self.waited_s is not None:
            return charged_seconds(self.wall_s, self.cpu_s, self.waited_s)
        return self.wall_s

    def recorded(self) -> dict[str, int]:
        """For the replay's decision: ``wall_ms`` and, when measured, ``cpu_ms``, ``wait_ms``."""
        out = {"wall_ms": int(self.wall_s * 1000)}
        if self.cpu_s is not None and self.waited_s is not None:
            out["cpu_ms"] = int(self.cpu_s * 1000)
            out["wait_ms"] = int(self.waited_s * 1000)
        return out
