"""A queued match, from claim to record: what the play-match task does, once per delivery.

1. Claim it (``match_start``, conditional): a second delivery finds it taken
   and does nothing; a match claimed ``LADDER_MATCH_MAX_ATTEMPTS`` times
   already is errored instead.
2. While it is played, a heartbeat renews the claim's lease (``LeaseKeeper``);
   if the claim is lost, the runner stops at its next decision.
3. Dial each seat's bot (``workers.seats``: remote endpoints, or hosted bots
   started in the sandbox), run the match on an engine of the pool
   (``workers.runner``: it resumes the game itself if its engine dies).
4. Finish it through ``ladder.finishing.services``: ``match_finish`` records
   the result, replay and ratings exactly once with the hosted seats' logs
   (kept for their owners), then auto-suspends failing bots and advances its
   tournament; ``match_finish_errored`` does the same for an errored match.

Failures end in one of two ways. Errored for good, with the reason: a seat
that cannot be dialed, an engine that refuses what it should accept, a
match past its wall-clock limit, a result the ladder refuses. Released back to
``queued`` for a retry (the task retries with backoff): no engine took the
game back, this worker reached none of the bots (``workers.runner.blame``),
the database failed, the task's soft time limit, anything unexpected - until the
attempts run out, then errored. Every write is fenced
by the claim, so a worker that lost its lease changes nothing.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from typing import Any, TypedDict

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import DatabaseError

from digdown.results import ResultError
from ladder.common.exceptions import ApplicationError
from ladder.finishing.services import match_finish, match_finish_errored
from ladder.matches.claims import match_release, match_start
from ladder.matches.models import Match
from workers import metrics
from workers.connected import notify_match_end
from workers.lease import LeaseKeeper
from workers.live import LivePublisher
from workers.runner import (
    EngineError,
    EnginePool,
    EngineUnavailable,
    InfrastructureFault,
    MatchAborted,
    MatchOverrun,
    NoSeatPlayed,
    Referee,
    TimeControl,
    WorkerCutOff,
    run_match,
)
from workers.runner import replay as replay_io
from workers.runner.engines import engine_pool
from workers.seats import SeatBots, SeatRefused, seat_bots

log = logging.getLogger("workers.match")


@dataclass
class PlayReport:
    """What one delivery of the play-match task did; its ``line`` is the match's log line."""

    match_id: int
    # finished, errored, released (for a retry), skipped (not ours), aborted, deferred
    # (not claimed: this worker stays away after an outage of its own)
    status: str
    attempt: int = 0
    worker: str = ""
    seats: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    decisions: int = 0
    resumes: int = 0
    reason: str = ""  # the result's reason when finished
    ranks: list[int] = field(default_factory=list)
    error: str = ""
    recorded: bool = False
    # Where the time went: claim, dial, run (of which engine and bots), replay, record.
    timings: dict[str, float] = field(default_factory=dict)

    def line(self) -> str:
        if self.status == "skipped":
            return f"match {self.match_id} skipped: {self.error} (nothing done)"
        what = (
            f"{self.reason} ranks {self.ranks}" + ("" if self.recorded else " (already recorded)")
            if self.status == "finished"
            else self.error
        )
        times = " ".join(f"{k}={v:.3f}" for k, v in self.timings.items())
        return (
            f"match {self.match_id} {self.status} attempt {self.attempt} "
            f"seats [{', '.join(self.seats)}] {self.duration_s:.2f} s, "
            f"{self.decisions} decisions, {self.resumes} resumes: {what} [{times}]"
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Claim(TypedDict):
    """Who holds a match: every write the worker makes is fenced by it."""

    match_id: int
    worker: str
    attempt: int


def worker_name() -> str:
    """Who holds a claim: ``host:pid`` of the process playing the match."""
    return f"{socket.gethostname()}:{os.getpid()}"


def time_control() -> TimeControl:
    """The time control and limits of ladder matches (settings; docs/workers.md)."""
    return TimeControl(
        decision_s=settings.LADDER_MATCH_DECISION_S,
        bank_s=settings.LADDER_MATCH_BANK_S,
        match_s=settings.LADDER_MATCH_WALL_S,
        engine_resume_s=settings.LADDER_ENGINE_RESUME_S,
        hosted_clock=settings.LADDER_MATCH_HOSTED_CLOCK,
        cpu_wall_factor=settings.LADDER_MATCH_CPU_WALL_FACTOR,
        streams=settings.LADDER_MATCH_STREAMS,
    )


def _seat_labels(match: Match) -> tuple[list[Any], list[str]]:
    seats = list(match.seats.select_related("bot", "version").order_by("seat"))
    return seats, [f"{s.bot.name}#{s.version.number}" for s in seats]


# Until when (monotonic) this process stays away from new matches: it released one
# because its own infrastructure failed (cut off from the bots, no engine reachable).
_own_fault_until = 0.0


def own_fault_cooldown_s() -> float:
    """What is left of this process's stay-away after an outage of its own (0: none)."""
    return max(0.0, _own_fault_until - time.monotonic())


def _note_own_fault() -> None:
    """This worker's own infrastructure failed a match: for LADDER_WORKER_OWN_FAULT_COOLDOWN_S
    it claims nothing, so the released match (and the others) land on a worker that can
    play them instead of spending their attempts here on the same outage."""
    global _own_fault_until
    _own_fault_until = time.monotonic() + settings.LADDER_WORKER_OWN_FAULT_COOLDOWN_S


def play_queued_match(
    match_id: int, *, worker: str | None = None, engines: EnginePool | None = None
) -> PlayReport:
    """Claim, play and record one match (see the module docstring); never raises for a match.

    A process within its stay-away after an outage of its own claims nothing: the report
    says "deferred" and the match stays queued, its attempts untouched (the task sends it
    again, for any worker)."""
    worker = worker or worker_name()
    started = time.monotonic()
    report = PlayReport(match_id=match_id, status="skipped", worker=worker)
    timings = report.timings
    if own_fault_cooldown_s() > 0:
        report.status = "deferred"
        report.error = (
            "this worker failed a match itself (an outage of its own): it claims nothing "
            f"for {own_fault_cooldown_s():.0f} s more"
        )
        return report
    try:
        match = match_start(
            match_id=match_id,
            worker=worker,
            lease_seconds=settings.LADDER_MATCH_LEASE_S,
            max_attempts=settings.LADDER_MATCH_MAX_ATTEMPTS,
        )
    except ApplicationError as exc:
        report.error = exc.message
        return report
    finally:
        timings["claim"] = time.monotonic() - started
    report.attempt = match.attempts
    claim = Claim(match_id=match_id, worker=worker, attempt=match.attempts)
    bots = SeatBots([])
    try:
        seats, report.seats = _seat_labels(match)
        with (
            LeaseKeeper(**claim, lease_s=settings.LADDER_MATCH_LEASE_S) as lease,
            ExitStack() as stack,
        ):
            mark = time.monotonic()
            bots = seat_bots(stack, seats)
            timings["dial"] = time.monotonic() - mark
            metrics.observe_hosted_starts(bots.hosted.values())
            live = LivePublisher(match_id, earlier_attempts=match.attempts > 1)  # spectators' view
            stack.callback(live.close)
            outcome = run_match(
                engines or engine_pool(settings.ENGINE_ADDRESS),
                bots.specs,
                seed=match.seed,
                difficulty=match.difficulty,
                ruleset=match.ruleset,
                time_control=time_control(),
                match_id=str(match_id),
                cancel=lease.lost,
                referee=Referee(controls=settings.LADDER_BLAME_CONTROLS),
                on_decision=live,
            )
        report.decisions, report.resumes = outcome.decisions, outcome.resumes
        timings.update(run=outcome.duration_s, engine=outcome.engine_s, bots=outcome.bots_s)
        mark = time.monotonic()
        replay = replay_io.encode(outcome.replay)
        timings["replay"] = time.monotonic() - mark
        mark = time.monotonic()
        try:
            recorded = match_finish(
                match_id=match_id,
                result=outcome.game_result,
                replay_bytes=replay,
                seat_logs=_logs(bots),
            )
        except ApplicationError as exc:
            # Refused (or cancelled meanwhile): never leave it running with nobody to finish it.
            _fail(report, claim, f"result not recorded: {exc.message}", bots)
        except ResultError as exc:  # the engine's result is not one: recorded nowhere
            _fail(report, claim, f"result not recorded: {exc}", bots)
        else:
            report.status, report.recorded = "finished", recorded.recorded
            if recorded.recorded:
                metrics.observe_result(outcome, [seat.bot.kind for seat in seats])
            report.reason = str(outcome.result.get("reason", ""))
            report.ranks = list(outcome.ranks)
            notify_match_end(match_id, bots.connected)
        timings["record"] = time.monotonic() - mark
    except MatchAborted as exc:
        report.status, report.error = "aborted", str(exc)
    except SeatRefused as exc:
        if exc.detail and exc.seat is not None:
            bots = SeatBots([], notes={exc.seat: exc.detail.encode()})
        _fail(report, claim, exc.message, bots)
    except (EngineError, MatchOverrun, NoSeatPlayed) as exc:
        _fail(report, claim, getattr(exc, "message", None) or str(exc), bots)
    except (EngineUnavailable, InfrastructureFault, DatabaseError, SoftTimeLimitExceeded) as exc:
        if isinstance(exc, EngineUnavailable | WorkerCutOff):
            _note_own_fault()
        _release(report, claim, f"{type(exc).__name__}: {exc}", bots)
    except Exception as exc:  # a bug must not strand the match: retry it, capped
        log.exception("match %d: unexpected failure", match_id)
        _release(report, claim, f"internal error: {type(exc).__name__}: {exc}", bots)
    report.duration_s = time.monotonic() - started
    return report


def _logs(bots: SeatBots) -> dict[int, bytes] | None:
    """The hosted seats' logs and the remote seats' notes, kept with their seats by the
    finishing service (owner-only; never in the replay)."""
    return bots.logs() if bots.hosted or bots.notes else None


def _fail(report: PlayReport, claim: Claim, error: str, bots: SeatBots) -> None:
    report.status, report.error = "errored", error
    try:
        match_finish_errored(error=error, seat_logs=_logs(bots), **claim)
    except ApplicationError:
        pass  # no longer ours (taken over, cancelled): nothing to write
    except DatabaseError as exc:
        # The lease will run out and the janitor will requeue it (attempts stay capped).
        report.status, report.error = "aborted", f"{error}; marking it errored failed: {exc}"


def _release(report: PlayReport, claim: Claim, error: str, bots: SeatBots) -> None:
    """Back to the queue for a retry, or errored when this was the last attempt."""
    if claim["attempt"] >= settings.LADDER_MATCH_MAX_ATTEMPTS:
        _fail(report, claim, f"gave up after {claim['attempt']} attempts: {error}", bots)
        return
    report.error = error
    try:
        released = match_release(error=error, **claim)
    except DatabaseError as exc:
        # The lease will run out and the janitor will requeue it.
        report.status, report.error = "aborted", f"{error}; release failed: {exc}"
        return
    report.status = "released" if released else "aborted"
