"""A cgroup (v2) per hosted seat where the worker has one to give: limits and accounting.

rlimits bound each process, not a seat: a bot with many busy threads or
processes takes as much of the machine as it likes, and its CPU time is not
readable as one figure. A cgroup bounds and counts the whole seat. The worker
looks once, at start, for a cgroup v2 directory it may write (the setting
``LADDER_SANDBOX_CGROUP``, else its own cgroup) and makes one child per worker
process under it, then one per seat. Three modes follow, told in the worker's
start-up log and its health:

- ``cgroup``: the memory, pids and cpu controllers are delegated: each seat gets
  ``memory.max`` (its address-space limit; its tmpfs is charged there too),
  ``memory.swap.max`` 0, ``pids.max`` (its process limit) and ``cpu.max`` (its
  CPU share, ``SandboxLimits.cpus`` cores); its CPU time and memory peak are read
  from ``cpu.stat`` and ``memory.peak``; ``cgroup.kill`` ends it at once;
- ``cgroup-accounting``: a cgroup v2 directory is writable but those controllers
  are not delegated (a hybrid hierarchy, or a cgroup that holds processes): each
  seat still has its own cgroup, so its CPU time (``cpu.stat`` is there without
  any controller) and ``cgroup.kill`` work; the limits stay the rlimits;
- ``rlimits``: no cgroup at all: the rlimits of ``boot.py``, and CPU time summed
  over the seat's processes in ``/proc``.

The rlimits are set in every mode (defence in depth).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("workers.sandbox")

CONTROLLERS = ("memory", "pids", "cpu")
CPU_PERIOD_US = 100_000
REMOVE_WAIT_S = 5.0


@dataclass(frozen=True)
class CgroupSupport:
    """What this worker process can do with cgroups (``mode``), where, and why not more."""

    mode: str  # "cgroup", "cgroup-accounting" or "rlimits"
    seats_dir: str = ""  # this process's cgroup for its seats
    why: str = ""

    def describe(self) -> str:
        if self.mode == "cgroup":
            return f"cgroup v2 per seat with memory.max, pids.max, cpu.max under {self.seats_dir}"
        if self.mode == "cgroup-accounting":
            return (
                f"cgroup v2 per seat for CPU time and killing under {self.seats_dir}; limits by "
                f"rlimits ({self.why})"
            )
        return f"rlimits only, CPU time from /proc ({self.why})"


def _cgroup2_mount() -> str:
    with contextlib.suppress(OSError), open("/proc/self/mountinfo") as fh:
        for line in fh:
            left, _, right = line.partition(" - ")
            if right.split(" ", 1)[0] == "cgroup2":
                return left.split()[4]
    return ""


def _own_cgroup(mount: str) -> str:
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as fh:
        for line in fh:
            if line.startswith("0::"):
                return os.path.join(mount, line[3:].strip().lstrip("/"))
    return ""


def _write(path: Path, value: str) -> None:
    path.write_text(value)


def _enable(cgroup: Path, wanted: tuple[str, ...]) -> set[str]:
    """Enable ``wanted`` controllers for ``cgroup``'s children; the ones that took."""
    try:
        available = set((cgroup / "cgroup.controllers").read_text().split())
    except OSError:
        return set()
    enabled = set()
    for name in wanted:
        if name not in available:
            continue
        try:
            _write(cgroup / "cgroup.subtree_control", f"+{name}")
            enabled.add(name)
        except OSError:
            continue
    return enabled


_support: dict[str, CgroupSupport] = {}
_support_lock = threading.Lock()


def cgroup_support(configured: str = "") -> CgroupSupport:
    """Detect (once per process and setting) what cgroups this worker may use for its seats."""
    with _support_lock:
        if configured not in _support:
            _support[configured] = found = _detect(configured)
            log.info("hosted seats' resources: %s", found.describe())
        return _support[configured]


def _detect(configured: str) -> CgroupSupport:
    mount = _cgroup2_mount()
    if not mount and not configured:
        return CgroupSupport("rlimits", why="no cgroup v2 hierarchy is mounted")
    base = Path(configured or _own_cgroup(mount))
    if not (base / "cgroup.procs").exists():
        return CgroupSupport("rlimits", why=f"{base} is not a cgroup v2 directory")
    _remove_stale(base)
    seats_dir = base / f"digdown-seats-{os.getpid()}"
    try:
        seats_dir.mkdir(exist_ok=True)
    except OSError as exc:
        return CgroupSupport("rlimits", why=f"cannot create a cgroup in {base}: {exc.strerror}")
    atexit.register(_remove, seats_dir)
    if not (seats_dir / "cgroup.kill").exists():
        _remove(seats_dir)
        return CgroupSupport("rlimits", why="the kernel's cgroups have no cgroup.kill (< 5.14)")
    delegated = _enable(base, CONTROLLERS) & _enable(seats_dir, CONTROLLERS)
    missing = [c for c in CONTROLLERS if c not in delegated]
    if missing:
        why = f"controllers {', '.join(missing)} are not delegated to {base}"
        return CgroupSupport("cgroup-accounting", str(seats_dir), why)
    return CgroupSupport("cgroup", str(seats_dir))


def _remove_stale(base: Path) -> None:
    """Seat cgroups of worker processes that are gone (a pool process exits without atexit)."""
    for old in base.glob("digdown-seats-*"):
        pid = old.name.rpartition("-")[2]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            _remove(old)


def _remove(path: Path) -> None:
    """rmdir a cgroup once its processes are gone (they leave asynchronously)."""
    deadline = time.monotonic() + REMOVE_WAIT_S
    for child in sorted(path.glob("*/"), reverse=True) if path.exists() else []:
        if (child / "cgroup.procs").exists():
            _remove(child)
    while True:
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                log.warning("cgroup %s not removed: %s", path, exc.strerror)
                return
            time.sleep(0.05)


_seat_numbers = iter(range(1, 1 << 62))
_seat_lock = threading.Lock()


class SeatCgroup:
    """One seat's cgroup: created with its limits, read while it plays, removed at the end."""

    def __init__(self, support: CgroupSupport, *, memory_bytes: int, processes: int, cpus: float):
        with _seat_lock:
            number = next(_seat_numbers)
        self.path = Path(support.seats_dir) / f"seat-{number}"
        self.path.mkdir()
        self.limited = support.mode == "cgroup"
        if self.limited:
            _write(self.path / "memory.max", str(memory_bytes))
            with contextlib.suppress(OSError):  # absent without swap accounting
                _write(self.path / "memory.swap.max", "0")
            _write(self.path / "pids.max", str(processes))
            if cpus > 0:
                _write(self.path / "cpu.max", f"{int(cpus * CPU_PERIOD_US)} {CPU_PERIOD_US}")
        self.cpu_s_at_end: float | None = None
        self.memory_peak_at_end: int | None = None

    @property
    def procs(self) -> str:
        """The file a process writes ``0`` into to enter this cgroup."""
        return str(self.path / "cgroup.procs")

    def _keyed(self, name: str) -> dict[str, int]:
        try:
            text = (self.path / name).read_text()
        except OSError:
            return {}
        out = {}
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                out[key] = int(value)
        return out

    def cpu_seconds(self) -> float | None:
        usage = self._keyed("cpu.stat").get("usage_usec")
        return None if usage is None else usage / 1e6

    def cpu_stall_seconds(self) -> float | None:
        """How long the seat had threads ready to run and none running, so far (None: the
        kernel does not say).

        The ``full`` line of the cgroup's ``cpu.pressure`` (PSI): kept by the kernel for
        the cgroup as a whole, so the threads and processes that already exited count
        too. PSI averages its per-CPU figures weighted by how busy the cgroup was on
        each CPU, so the figure is the seat's exact hold-back only while the seat runs
        on one CPU (``workers/sandbox/pinning.py``); across several it is less.
        """
        try:
            text = (self.path / "cpu.pressure").read_text()
        except OSError:
            return None
        for line in text.splitlines():
            kind, _, fields = line.partition(" ")
            if kind == "full":
                with contextlib.suppress(ValueError):
                    return int(fields.rpartition("total=")[2]) / 1e6
        return None

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def memory_peak(self) -> int | None:
        for name in ("memory.peak", "memory.max_usage_in_bytes"):
            with contextlib.suppress(OSError, ValueError):
                return int((self.path / name).read_text())
        return None

    def limits_hit(self) -> list[str]:
        """Which of the seat's cgroup limits stopped something (from the event counters)."""
        hit = []
        events = self._keyed("memory.events")
        if events.get("oom_kill"):
            hit.append(f"memory.max (out of memory, {events['oom_kill']} killed)")
        elif events.get("max"):
            hit.append("memory.max (allocations refused)")
        if self._keyed("pids.events").get("max"):
            hit.append("pids.max (a fork or thread refused)")
        throttled = self._keyed("cpu.stat").get("nr_throttled")
        if self.limited and throttled:
            hit.append(f"cpu.max (throttled {throttled} times)")
        return hit

    def kill(self) -> None:
        """SIGKILL every process of the seat at once (``cgroup.kill``)."""
        with contextlib.suppress(OSError):
            _write(self.path / "cgroup.kill", "1")

    def close(self) -> None:
        """Keep the last readings, kill what is left, remove the cgroup."""
        self.cpu_s_at_end = self.cpu_seconds()
        self.memory_peak_at_end = self.memory_peak()
        self.kill()
        _remove(self.path)


# --- without a cgroup: the seat's processes in /proc ---------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _children(pid: int) -> list[int]:
    out: list[int] = []
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/children") as fh:
                out += [int(c) for c in fh.read().split()]
    return out


def process_tree_cpu_seconds(root_pid: int) -> float | None:
    """CPU time of ``root_pid`` and every descendant, plus the children they reaped.

    ``utime + stime`` of each live process (all its threads) and ``cutime +
    cstime`` (its waited-for children, dead and gone from the tree), in clock
    ticks. None when ``root_pid`` is gone.
    """
    total = 0
    seen = 0
    stack = [root_pid]
    while stack:
        pid = stack.pop()
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rpartition(")")[2].split()
        except OSError:
            continue
        seen += 1
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
        stack += _children(pid)
    return total / CLOCK_TICKS if seen else None


def process_tree(root_pid: int) -> list[int]:
    """``root_pid`` and its live descendants."""
    found, stack = [], [root_pid]
    while stack:
        pid = stack.pop()
        if os.path.exists(f"/proc/{pid}"):
            found.append(pid)
            stack += _children(pid)
    return found


def thread_waits(pids: list[int]) -> dict[int, int]:
    """Each live thread of ``pids``: nanoseconds it spent runnable but waiting for a CPU.

    The second field of ``/proc/PID/task/TID/schedstat``: how long the machine, not
    the bot, held the thread back. Gone with the thread.
    """
    found: dict[int, int] = {}
    for pid in pids:
        with contextlib.suppress(OSError):
            for tid in os.listdir(f"/proc/{pid}/task"):
                path = f"/proc/{pid}/task/{tid}/schedstat"
                with contextlib.suppress(OSError, ValueError, IndexError), open(path) as fh:
                    found[int(tid)] = int(fh.read().split()[1])
    return found


def runqueue_wait_seconds(pids: list[int]) -> float:
    """Time the live threads of ``pids`` spent runnable but waiting for a CPU, summed."""
    return sum(thread_waits(pids).values()) / 1e9


class ThreadWaits:
    """The waits for a CPU of every thread seen so far, living or exited since.

    Without a cgroup (``rlimits`` mode) a seat's waits are read per thread, and a
    thread that exits takes its figure with it: summed over the live threads only,
    the total would fall, and the clock would charge the fall to later decisions.
    Here a thread keeps the wait it had when last read. What a thread waited
    between its last reading and its exit is still lost (the kernel keeps it only
    in taskstats, which needs CAP_NET_ADMIN and delay accounting turned on), so a
    bot whose threads or processes live within one decision is charged their waits.
    """

    def __init__(self) -> None:
        self._last: dict[int, int] = {}
        self._gone = 0  # ns: the last readings of threads that exited

    def seconds(self, pids: list[int]) -> float:
        now = thread_waits(pids)
        for tid, last in self._last.items():
            current = now.get(tid)
            if current is None or current < last:  # exited (its tid maybe reused since)
                self._gone += last
        self._last = now
        return (self._gone + sum(now.values())) / 1e9


def process_tree_memory_peak(root_pid: int) -> int:
    """The largest resident peak (VmHWM) of one process of the tree, in bytes."""
    peak = 0
    stack = [root_pid]
    while stack:
        pid = stack.pop()
        with contextlib.suppress(OSError), open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]) * 1024)
        stack += _children(pid)
    return peak
