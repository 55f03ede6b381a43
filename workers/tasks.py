"""The workers' Celery tasks: play one match, a version's smoke match, and the janitor.

Thin: the work is elsewhere. ``play_match`` is what
``ladder.matches.queue.match_enqueue`` sends (by name) for every match
created, released for a retry, or requeued by the janitor; ``smoke_version``
is sent when a hosted version is uploaded (``ladder.bots.services``);
``janitor`` and ``matchmake`` run on beat (and as ``manage.py janitor`` and
``manage.py matchmake``). Delivery settings and
limits: ``ladder/settings/workers.py`` and docs/workers.md.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import asdict
from typing import Any

from celery import Task
from celery.signals import worker_process_shutdown, worker_ready
from celery.utils.time import get_exponential_backoff_interval
from celery.worker.control import inspect_command
from django.conf import settings

from ladder.bots.models import BotVersion
from ladder.bots.services import bot_versions_resend_pending
from ladder.common.exceptions import ApplicationError
from ladder.matches.retries import match_requeue_stale
from ladder.matchmaking.services import matchmake as matchmake_ladders
from ladder.tournaments.services import tournaments_advance_running
from telemetry.logs import bound
from workers import metrics
from workers.celery_app import app
from workers.hosted import log_sandbox_status, sandbox_mode, sandbox_status
from workers.orphans import resend_orphaned
from workers.queued_match import own_fault_cooldown_s, play_queued_match, worker_name
from workers.runner import RunnerError
from workers.runner.engines import engine_pool, shutdown
from workers.smoke import StartTimedOut, play_smoke_match

log = logging.getLogger("workers.tasks")


def retry_delay(attempt: int) -> int:
    """Seconds before retry number ``attempt``: exponential from the backoff, jittered in
    its upper half ("equal jitter"). Never near zero: a match released because of an
    outage (a worker cut off, its engines away) must not spend its attempts within
    seconds, on the same outage; half the exponential delay at least lets it outlast a
    typical one (docs/workers.md, "Delivery settings")."""
    full = get_exponential_backoff_interval(
        factor=max(1, round(settings.LADDER_MATCH_RETRY_BACKOFF_S)),
        retries=max(0, attempt - 1),
        maximum=max(1, round(settings.LADDER_QUEUED_GRACE_S / 2)),
        full_jitter=False,
    )
    return int(full / 2 + random.uniform(0, full / 2))


@app.task(
    bind=True,
    name=settings.LADDER_TASK_PLAY_MATCH,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.LADDER_MATCH_SOFT_LIMIT_S,
    time_limit=settings.LADDER_MATCH_HARD_LIMIT_S,
    max_retries=settings.LADDER_MATCH_MAX_ATTEMPTS,
)
def play_match(self: Task, match_id: int) -> str:
    """Play one queued match exactly once (workers/queued_match.py); retry it if released.

    The match's log line says everything; the return value (which Celery logs
    too) is only the outcome.
    """
    with bound(match_id=int(match_id), worker=worker_name()):
        report = play_queued_match(int(match_id))
        metrics.observe_delivery(report)
        log.info("%s", report.line())
    if report.status == "released":
        raise self.retry(countdown=retry_delay(report.attempt))
    if report.status == "deferred":
        # Not claimed, attempts untouched: a new message, for any worker (this one takes
        # it again only after its stay-away; the claim fences duplicates).
        self.apply_async(
            args=[match_id],
            countdown=min(5.0, max(1.0, own_fault_cooldown_s())),
            priority=(self.request.delivery_info or {}).get("priority"),
        )
    return report.status


@app.task(
    bind=True,
    name=settings.LADDER_TASK_SMOKE_VERSION,
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=settings.LADDER_SMOKE_SOFT_LIMIT_S,
    time_limit=settings.LADDER_SMOKE_SOFT_LIMIT_S + 30,
    max_retries=settings.LADDER_MATCH_MAX_ATTEMPTS,
)
def smoke_version(self: Task, version_id: int, attempt: int = 0) -> str:
    """Play a new hosted version's smoke match and mark it VALID or INVALID.

    A version that is no longer pending (played by an earlier delivery) is
    skipped. Engine trouble is not the bot's fault: the version stays PENDING and
    the task retries with backoff; past the retries the janitor sends it again.
    """
    pending = BotVersion.objects.filter(pk=version_id, status=BotVersion.Status.PENDING)
    if not pending.exists():
        return "skipped"
    try:
        done = play_smoke_match(
            version_id=int(version_id),
            engine_address=engine_pool(settings.ENGINE_ADDRESS),
            attempt=int(attempt),
        )
    except RunnerError as exc:
        log.warning("smoke match of version %s: engine trouble, retrying: %s", version_id, exc)
        raise self.retry(countdown=retry_delay(self.request.retries + 1)) from exc
    except StartTimedOut as exc:  # the machine may be slow: never charge the bot for it
        metrics.SMOKE.labels("start_timeout").inc()
        attempt = exc.attempt + 1
        if attempt >= settings.LADDER_SMOKE_START_ATTEMPTS:
            log.warning(
                "smoke match of version %s: %s; the machine held it back, left pending",
                version_id,
                exc,
            )
            return "pending"
        log.warning("smoke match of version %s: %s; played again later", version_id, exc)
        raise self.retry(
            countdown=retry_delay(attempt),
            args=(version_id, attempt),
            kwargs={},
            max_retries=self.request.retries + 1,
        ) from exc
    except ApplicationError as exc:  # this worker cannot sandbox, or the version went away
        log.warning("smoke match of version %s not played: %s", version_id, exc.message)
        metrics.SMOKE.labels("refused").inc()
        return "refused"
    metrics.SMOKE.labels(done.status).inc()
    return done.status


@app.task(name=settings.LADDER_TASK_JANITOR, soft_time_limit=60, time_limit=90)
def janitor() -> dict[str, list[int]]:
    """Requeue matches whose lease expired and resend queued ones whose message was lost;
    send again the smoke matches of versions left pending; advance idle tournaments."""
    report = asdict(
        match_requeue_stale(
            queued_grace_s=settings.LADDER_QUEUED_GRACE_S,
            max_attempts=settings.LADDER_MATCH_MAX_ATTEMPTS,
        )
    )
    report["orphans_resent"] = resend_orphaned()
    report["smoke_resent"] = bot_versions_resend_pending(grace_s=settings.LADDER_QUEUED_GRACE_S)
    # Tournaments whose last match closed without advancing them (cancelled, a worker lost).
    report["tournaments_advanced"] = tournaments_advance_running()
    if report["smoke_resent"]:
        log.info("janitor: smoke matches sent again for versions %s", report["smoke_resent"])
    metrics.observe_janitor(report)
    return report


@app.task(name=settings.LADDER_TASK_MATCHMAKE, soft_time_limit=60, time_limit=90)
def matchmake() -> dict[str, list[int]]:
    """Top the matchmaker's ladders up to their target of open matches (docs/matchmaking.md).

    The ladder's service does the work and logs one line per ladder; this
    returns the ids of the matches created, per ladder.
    """
    started = time.monotonic()
    reports = matchmake_ladders()
    metrics.observe_matchmaking(reports, time.monotonic() - started)
    return {r.ladder: r.created for r in reports}


@worker_process_shutdown.connect
def _close_engines(**_: Any) -> None:
    """A pool process that exits closes its channels and stops the engine it started."""
    shutdown()
    metrics.pool_process_exited()


@worker_ready.connect
def _serve_metrics(**_: Any) -> None:
    """The worker's main process serves the metrics of its pool and says its sandbox mode."""
    metrics.worker_started()
    metrics.observe_sandbox_mode(sandbox_mode())


@worker_ready.connect
def _say_how_hosted_bots_run(**_: Any) -> None:
    """The start-up log says the sandbox's mode, its filter and its resource mode."""
    try:
        log_sandbox_status()
    except Exception:  # the worker serves remote bots whatever this says
        log.exception("could not tell how hosted bots run here")


@inspect_command()
def sandbox(state: Any, **_: Any) -> dict[str, str]:
    """``celery inspect sandbox`` (and ``python -m deploy.health worker``): how hosted bots run."""
    return sandbox_status()
