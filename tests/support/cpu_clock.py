"""What the CPU clock charges a hosted bot for each way of spreading its work.

Shared by the test (``tests/workers/sandbox/test_cpu_clock.py``) and the bench
(``bench/cpu_clock_bench.py``). The bot is ``tests/workers/sandbox/hostile/spread.py``
in the real sandbox; its decisions are asked as the runner asks them, around the
runner's ``DecisionClock`` with the seat's own measure (``HostedSeat.cpu_usage``).
Beside it, the same decisions under the measure the clock had before, the waits
of the seat's live threads only, to show what it charged.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import grpc

from digdown import wire
from digdown.v1 import bot_pb2, bot_pb2_grpc
from engine.rules import GameConfig, new_game
from tests.workers.sandbox.conftest import hostile_bundle
from workers.runner import TimeControl
from workers.runner.clock import DecisionClock
from workers.sandbox import HostedSeat, SandboxConfig, SandboxLimits, hosted_seat, sandbox_check
from workers.sandbox.cgroups import process_tree, runqueue_wait_seconds

# Every pattern of the spread bot, in the order of the report.
PATTERNS = ("main", "reused", "threads", "procs", "orphans", "sleep", "spin")
# "drop" (the threads of "reused" exit, the work in the answering thread) is asked apart.
# Patterns whose work is a sleep or a wall-clock loop: compared with their wall time.
BY_WALL = ("sleep", "spin")
CPU_CLOCK = TimeControl(hosted_clock="cpu")


@dataclass
class Row:
    """One pattern's decisions, summed (seconds)."""

    pattern: str
    work_s: float  # asked per decision: CPU seconds, or wall seconds of a sleep or spin
    decisions: int
    wall_s: float
    cpu_s: float
    waited_s: float
    charged_s: float
    charged_live_threads_s: float  # the measure before: the live threads' waits only

    @property
    def used_s(self) -> float:
        """What the bot used: its CPU time, or for a sleep the time it asked to sleep."""
        return self.work_s * self.decisions if self.pattern == "sleep" else self.cpu_s

    @property
    def ratio(self) -> float:
        return self.charged_s / self.used_s if self.used_s else float("inf")

    @property
    def ratio_live_threads(self) -> float:
        return self.charged_live_threads_s / self.used_s if self.used_s else float("inf")


def decision_request(pattern: str) -> bot_pb2.DecisionRequest:
    """A real decision of a 4-seat game, its ``game_id`` naming the pattern to play."""
    state = new_game(GameConfig(seed=7, num_seats=4, difficulty="normal"))
    while len(legal := state.legal_actions()) == 1:
        state.apply_forced()
    seat = state.acting_seat
    return bot_pb2.DecisionRequest(
        game_id=pattern,
        seat=seat,
        observation=wire.observation_to_proto(state.observation(seat)),
        legal_actions=wire.actions_to_proto(legal),
        deadline_ms=60_000,
        time_left_ms=60_000,
    )


def live_threads_usage(seat: HostedSeat) -> Callable[[], tuple[float, float] | None]:
    """The clock's measure before: CPU time, and the waits of the threads alive now."""
    most = [0.0]

    def usage() -> tuple[float, float] | None:
        used = seat.cpu_seconds()
        if used is None:
            return None
        root = seat.init_pid or (seat.proc.pid if seat.proc is not None else 0)
        pids = seat.cgroup.pids() if seat.cgroup is not None else process_tree(root)
        most[0] = max(most[0], runqueue_wait_seconds(pids))
        return used, most[0]

    return usage


def seat_config(cgroup: str = "") -> SandboxConfig:
    """The real sandbox where it runs, else unsafe development mode: the same seat, its
    cgroup and its clock's measure, without isolation (a machine without bubblewrap)."""
    return SandboxConfig(cgroup=cgroup, unsafe_dev_mode=bool(sandbox_check()))


@contextmanager
def spread_seat(
    work_s: float,
    config: SandboxConfig | None = None,
    limits: SandboxLimits | None = None,
    pattern: str = "main",
    decisions: int = 1 << 30,
) -> Iterator[HostedSeat]:
    """The spread bot, started in the sandbox (``work_s`` per decision; ``pattern`` for the
    first ``decisions`` of a real match, whose game_id names none)."""
    limits = limits or SandboxLimits(start_s=60.0)
    config = config or seat_config()
    bundle = hostile_bundle("spread", work_s=work_s, pattern=pattern, decisions=decisions)
    with hosted_seat(bundle, limits, config) as seat:
        assert not seat.start_error, seat.log_bytes().decode(errors="replace")[-2000:]
        yield seat


def measure(
    seat: HostedSeat,
    work_s: float,
    decisions: int,
    patterns: tuple[str, ...] = PATTERNS,
    progress: Callable[[str], None] = lambda pattern: None,
) -> list[Row]:
    """``decisions`` decisions of each pattern (after one not counted: the first of a
    pattern starts its threads or warms its imports)."""
    rows = []
    with grpc.insecure_channel(seat.address) as channel:
        stub = bot_pb2_grpc.BotStub(channel)
        before = live_threads_usage(seat)
        for pattern in patterns:
            request = decision_request(pattern)
            samples = []
            for i in range(decisions + 1):
                old = DecisionClock(before, CPU_CLOCK)
                clock = DecisionClock(seat.cpu_usage, CPU_CLOCK)
                stub.Act(request, timeout=300)
                charged = clock.stop()
                charged_before = old.stop()
                if i:
                    samples.append(
                        (clock.wall_s, clock.cpu_s, clock.waited_s, charged, charged_before)
                    )
                progress(pattern)
            sums = [sum(float(s[k] or 0.0) for s in samples) for k in range(5)]
            rows.append(Row(pattern, work_s, len(samples), *sums))
    return rows


def table(rows: list[Row]) -> str:
    """The report's table: per pattern, means per decision (ms) and charged / used."""
    head = (
        f"{'pattern':<8} {'n':>3} {'wall ms':>9} {'CPU ms':>8} {'waited ms':>9} "
        f"{'charged ms':>10} {'charged/used':>12} {'before: live threads':>21}"
    )
    lines = [head]
    for r in rows:
        n = max(1, r.decisions)
        lines.append(
            f"{r.pattern:<8} {r.decisions:>3} {r.wall_s / n * 1e3:>9.1f} {r.cpu_s / n * 1e3:>8.1f} "
            f"{r.waited_s / n * 1e3:>9.1f} {r.charged_s / n * 1e3:>10.1f} {r.ratio:>12.3f} "
            f"{r.ratio_live_threads:>21.3f}"
        )
    return "\n".join(lines)


def mean_ratio(rows: list[Row]) -> float:
    return statistics.mean(r.ratio for r in rows)
