"""The speed targets the project holds itself to, checked against one ``make bench`` run.

Each target names a benchmark, the figures it reads (a glob over the flattened figure
paths of ``bench/run_all.py``), how several matching figures combine (the worst one
counts), and the bound. The report opens with the table this module builds, so a
reader sees at once which targets the run met and which it did not.
"""

from __future__ import annotations

import fnmatch
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    bench: str
    pattern: str
    what: str
    bound: float
    # ">=": the figure must reach the bound; "<=": it must stay under it.
    sense: str
    # Figures the pattern matches that the target does not cover (a comparison measured
    # beside it, such as the offset pages kept for old links): patterns of their own.
    skip: tuple[str, ...] = ()

    def met(self, value: float) -> bool:
        return value >= self.bound if self.sense == ">=" else value <= self.bound

    def worst(self, values: Sequence[float]) -> float:
        return min(values) if self.sense == ">=" else max(values)


TARGETS = (
    Target("engine", "replay.ratios.engine_vs_reference_step_wall",
           "rules core, plain stepping / reference", 4.0, ">="),
    Target("engine", "replay.ratios.engine_vs_reference_observe_wall",
           "rules core, stepping + observation / reference", 4.0, ">="),
    Target("grpc", "summary.stream_to_unary",
           "per-decision cost, streams / unary", 0.5, "<="),
    Target("grpc", "summary.stream_ratio_to_stream_floor",
           "per-decision cost, streams / streaming echo floor", 1.3, "<="),
    Target("grpc", "summary.hosted_stream_to_unary",
           "hosted (unix socket), streams / unary", 0.5, "<="),
    Target("grpc", "summary.hosted_stream_ratio_to_stream_floor",
           "hosted (unix socket), streams / its floor", 1.3, "<="),
    Target("workers", "configs.*.stream_to_unary",
           "matches/min per worker, streams / unary", 2.0, ">="),
    Target("training", "ratios.env_over_simulator_wall",
           "PettingZoo AEC env / simulator, games/s", 0.7, ">="),
    Target("training", "example.games_per_s",
           "training example, games/s (12 before)", 60.0, ">="),
    Target("ladder_reads", "*.p95_ms", "every REST/gRPC read, p95 ms (one client)", 50.0, "<=",
           skip=("*(offset*",)),
    Target("web", "pages.*.p95_ms", "every page, p95 ms (one client, in-process)", 50.0, "<=",
           skip=("*(offset*",)),
    # Over gunicorn as shipped, one keep-alive client, the page cache off (a page's cost
    # before any cache), the gRPC reads beside them; offset pages are old links' fallback.
    Target("load", "one_client.*.kinds.*.p95_ms",
           "every page and read p95 ms, one client (gunicorn, cache off; gRPC)", 50.0, "<=",
           skip=("one_client.cache_on.*", "*(offset*")),
    Target("load", "cached.*.p95_ms",
           "cached anonymous pages, 8 clients, p95 ms", 100.0, "<="),
)  # fmt: skip


def table(
    runs_of: Mapping[str, Sequence[Mapping[str, float]]],
    fmt: Callable[[float], str],
) -> list[str]:
    """Markdown rows: each target's worst matching figure (median over the runs)."""
    rows = ["| target | figure | bound | median | met |", "|---|---|---:|---:|:-:|"]
    for t in TARGETS:
        runs = runs_of.get(t.bench, ())
        keys = sorted({k for run in runs for k in run if fnmatch.fnmatchcase(k, t.pattern)
                       and not any(fnmatch.fnmatchcase(k, s) for s in t.skip)})  # fmt: skip
        if not keys:
            rows.append(f"| {t.what} | `{t.bench}: {t.pattern}` | {t.sense} {fmt(t.bound)} | "
                        "not run | - |")  # fmt: skip
            continue
        medians = {k: statistics.median(run[k] for run in runs if k in run) for k in keys}
        value = t.worst(list(medians.values()))
        key = next(k for k, v in medians.items() if v == value)
        mark = "yes" if t.met(value) else "**no**"
        rows.append(f"| {t.what} | `{t.bench}: {key}` | {t.sense} {fmt(t.bound)} | "
                    f"{fmt(value)} | {mark} |")  # fmt: skip
    return rows
