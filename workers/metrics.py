"""The workers' metrics: what every delivery of a match did, and how the bots behaved.

Counted from what the code reports (the delivery's ``PlayReport``, the
runner's ``MatchOutcome``), never from log lines. A result is counted by the
delivery that recorded it and only then: a match played again after its
worker died, or delivered twice, adds one ``finished`` in all, so the counters
agree with the database (the cluster tests check that). Decisions and faults
are counted with the result for the same reason.

A Celery worker is a group of processes (prefork): the main process serves
``/metrics`` on ``LADDER_METRICS_PORT`` and sums what its pool children wrote
(``telemetry.metrics``; the directory is set up in ``workers.celery_app``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

log = logging.getLogger("workers.metrics")

SEAT_KINDS = ("hosted", "remote", "connected")

MATCHES = Counter(
    "ladder_worker_matches_total",
    "Deliveries of the play-match task by outcome: finished (this delivery recorded the"
    " result), duplicate (the result was recorded already), errored, released (for a"
    " retry), aborted (the claim was lost), skipped (not ours to play)",
    ["outcome"],
)
PHASE_SECONDS = Histogram(
    "ladder_worker_match_phase_seconds",
    "Time a delivery spent claiming, dialling seats, playing, encoding and recording",
    ["phase"],
    buckets=(0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)
DECISION_SECONDS = Histogram(
    "ladder_worker_decision_seconds",
    "A bot's think time per decision, as the runner measured it, by kind of seat",
    ["seat_kind"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
FAULTS = Counter(
    "ladder_worker_faults_total",
    "Faults and forfeits the runner decided, by kind of seat and kind of fault",
    ["seat_kind", "kind", "forfeit"],
)
RESUMES = Counter(
    "ladder_worker_engine_resumes_total", "Games re-created on an engine after theirs died"
)
JANITOR = Counter(
    "ladder_janitor_actions_total",
    "What the janitor did: matches requeued or resent, smoke matches resent, tournaments moved",
    ["action"],
)
SMOKE = Counter("ladder_worker_smoke_matches_total", "Smoke matches by outcome", ["outcome"])
HOSTED_START_SECONDS = Histogram(
    "ladder_worker_hosted_start_seconds",
    "Time from launching a hosted seat's sandbox to the bot serving (or failing to)",
    ["started"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30),
)
SANDBOX_MODE = Gauge(
    "ladder_worker_sandbox_mode",
    "1 for the sandbox mode this worker runs hosted bots in (root, userns, unsafe, none)",
    ["mode"],
    multiprocess_mode="max",
)
MATCHMAKER_PASS_SECONDS = Histogram(
    "ladder_matchmaker_pass_seconds",
    "Time one matchmaker pass took over all its ladders",
    buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
MATCHMAKER_OPEN = Gauge(
    "ladder_matchmaker_open_matches",
    "Open (queued + running) matches on a ladder after the last matchmaker pass",
    ["ladder"],
    multiprocess_mode="mostrecent",
)
MATCHMAKER_TARGET = Gauge(
    "ladder_matchmaker_target",
    "Open matches the matchmaker keeps on a ladder",
    ["ladder"],
    multiprocess_mode="mostrecent",
)
MATCHMAKER_CREATED = Counter(
    "ladder_matchmaker_matches_created_total", "Matches the matchmaker created", ["ladder"]
)


def observe_delivery(report: Any) -> None:
    """Count one delivery of the play-match task from its report."""
    outcome = report.status
    if outcome == "finished" and not report.recorded:
        outcome = "duplicate"
    MATCHES.labels(outcome).inc()
    for phase, seconds in report.timings.items():
        PHASE_SECONDS.labels(phase).observe(seconds)


def observe_result(outcome: Any, seat_kinds: Sequence[str]) -> None:
    """Count a recorded match's decisions, faults and engine resumes."""
    for decision in outcome.replay.get("decisions", []):
        if decision.get("forced"):
            continue
        seat = decision.get("seat", -1)
        kind = seat_kinds[seat] if 0 <= seat < len(seat_kinds) else "unknown"
        DECISION_SECONDS.labels(kind).observe(decision.get("think_time_ms", 0) / 1000)
    for fault in outcome.faults:
        kind = seat_kinds[fault.seat] if 0 <= fault.seat < len(seat_kinds) else "unknown"
        FAULTS.labels(kind, fault.kind, str(fault.forfeit).lower()).inc()
    if outcome.resumes:
        RESUMES.inc(outcome.resumes)


def observe_hosted_starts(seats: Iterable[Any]) -> None:
    for seat in seats:
        HOSTED_START_SECONDS.labels(str(not seat.start_error).lower()).observe(seat.start_s)


def observe_janitor(report: dict[str, list[int]]) -> None:
    for action, ids in report.items():
        if ids:
            JANITOR.labels(action).inc(len(ids))


def observe_matchmaking(reports: Sequence[Any], seconds: float) -> None:
    MATCHMAKER_PASS_SECONDS.observe(seconds)
    for report in reports:
        MATCHMAKER_OPEN.labels(report.ladder).set(report.open_before + len(report.created))
        MATCHMAKER_TARGET.labels(report.ladder).set(report.target)
        if report.created:
            MATCHMAKER_CREATED.labels(report.ladder).inc(len(report.created))


def observe_sandbox_mode(mode: str) -> None:
    """The worker's sandbox mode, said once at start (the dashboard warns on "unsafe")."""
    SANDBOX_MODE.labels(mode).set(1)


def worker_started() -> int:
    """Serve this worker's ``/metrics`` (the main process); returns the port (0: none)."""
    from telemetry.metrics import serve

    return serve()


def pool_process_exited(pid: int | None = None) -> None:
    from telemetry.metrics import mark_dead

    mark_dead(pid or os.getpid())
