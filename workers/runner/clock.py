"""What one decision costs a seat: wall time, CPU time, and which of them is charged.

A hosted bot on a busy machine answers later than it thought: a CPU-bound
neighbour takes the core it was computing on. Charged wall time, it would pay
for the neighbour. Where the sandbox measures a seat's CPU time
(``BotSpec.cpu_seconds``) and the time control says ``hosted_clock="cpu"``, the
seat is charged its CPU time instead, but never less than its wall time divided
by ``cpu_wall_factor``: a bot that sleeps or blocks uses no CPU, and would
otherwise hold the match for free. The call's own wall deadline is widened by
the same factor (the generous wall cap). Other seats (remote, connected) are
charged wall time: their CPU is not ours to measure.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workers.runner.match import TimeControl


class DecisionClock:
    """Started when a decision is asked; ``stop`` gives the charged seconds."""

    def __init__(self, cpu_seconds: Callable[[], float | None] | None, tc: TimeControl) -> None:
        self._cpu_seconds = cpu_seconds
        self.by_cpu = cpu_seconds is not None and tc.hosted_clock == "cpu"
        self.factor = max(1.0, tc.cpu_wall_factor)
        self._cpu_start = cpu_seconds() if cpu_seconds is not None else None
        self._started = time.monotonic()
        self.wall_s = 0.0
        self.cpu_s: float | None = None

    def wall_timeout(self, budget_s: float) -> float:
        """The call's wall deadline for a charged budget of ``budget_s``."""
        return budget_s * self.factor if self.by_cpu else budget_s

    def stop(self) -> float:
        self.wall_s = time.monotonic() - self._started
        if self._cpu_seconds is not None and self._cpu_start is not None:
            now = self._cpu_seconds()
            if now is not None:
                self.cpu_s = max(0.0, now - self._cpu_start)
        if self.by_cpu and self.cpu_s is not None:
            return max(self.cpu_s, self.wall_s / self.factor)
        return self.wall_s

    def recorded(self) -> dict[str, int]:
        """For the replay's decision: ``wall_ms`` and, when measured, ``cpu_ms``."""
        out = {"wall_ms": int(self.wall_s * 1000)}
        if self.cpu_s is not None:
            out["cpu_ms"] = int(self.cpu_s * 1000)
        return out
