"""The engine process's metrics: live games, steps applied, how long a step takes.

Read per replica (each engine is its own scrape target), so a slow or busy
replica stands out on the dashboard. Call counts and latencies of every RPC come
from the shared gRPC interceptor (``telemetry.rpc``); these are the engine's own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

STEPS = Counter("engine_steps_total", "Answers applied to games (actions, faults, forfeits)")
STEP_SECONDS = Histogram(
    "engine_step_seconds",
    "Time to apply one answer and build the next decision",
    buckets=(0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25),
)
GAMES_CREATED = Counter("engine_games_created_total", "Games created (new or resumed)")


class GamesOpen(Collector):
    """Live games of this engine, read from its session store at each scrape."""

    def __init__(self, count: Callable[[], int]) -> None:
        self.count = count

    def collect(self) -> Iterator[Any]:
        yield GaugeMetricFamily("engine_games_open", "Games live in this engine", self.count())
