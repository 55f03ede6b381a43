"""The CPUs a hosted seat runs on, where its cgroup measures its waits for a CPU.

The CPU clock (``workers/runner/clock.py``) charges a seat its wall time minus the
time the machine kept it waiting for a CPU. Per thread, the kernel's scheduler
statistics say that only while the thread lives: a bot that spreads its work
over threads or processes made per decision loses their waits when they exit,
and was charged them (four new threads of 50 ms each: 514-1,212 ms charged for
200 ms of CPU). The seat's cgroup keeps the measure for all of its processes,
living or exited: its ``cpu.pressure`` ``full`` total, the time the seat had
work ready and none of it running. The kernel averages that figure over CPUs,
weighted by how busy the seat was on each, so it is exact for a seat on one
CPU and less than the truth for a seat spread over several. A seat whose
cgroup keeps it, and whose share is one CPU at most (``SandboxLimits.cpus``,
1 by default: its ``cpu.max`` where controllers are delegated), is therefore
pinned (its processes' affinity, inherited by all their children) to one CPU
of the worker's: the least used by this process's seats. A seat given more
than one CPU is not pinned and its waits are read per thread. A bot that
widens its own affinity only makes the measure smaller and is charged more,
never less than its CPU time.
"""

from __future__ import annotations

import os
import threading
from collections import Counter

_lock = threading.Lock()
_in_use: Counter[int] = Counter()  # CPU -> seats of this process pinned there now
_next = 0  # ties go round the CPUs, not always to the first


def take() -> list[int]:
    """The least used CPU this process may run on (as a list), held until ``give_back``."""
    allowed = sorted(os.sched_getaffinity(0))
    global _next
    with _lock:
        start, _next = _next, _next + 1
        order = {cpu: (i - start) % len(allowed) for i, cpu in enumerate(allowed)}
        chosen = sorted(allowed, key=lambda cpu: (_in_use[cpu], order[cpu]))[:1]
        _in_use.update(chosen)
    return chosen


def give_back(chosen: list[int]) -> None:
    with _lock:
        _in_use.subtract(chosen)
        for cpu in chosen:
            if _in_use[cpu] <= 0:
                del _in_use[cpu]
