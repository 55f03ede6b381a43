"""What happens when a match ends, in one place: ``match_finish`` and ``match_finish_errored``.

A worker that played a match calls one of them; nothing else follows a result.

Inside the recording transaction (all or nothing with the result): the result,
seats, replay and ratings (``ladder.matches.recording.match_record_result``) or
the errored state (``match_fail``), and the hosted seats' logs, so a retried
delivery that finds the result recorded never replaces the logs of the attempt
that counted.

After it commits (``transaction.on_commit``), because they must never undo or
fail the result and each one is safe to repeat: auto-suspend of the bots that
failed in it (``ladder.finishing.suspensions``) and the advance of its
tournament (next Swiss round or finished; ``tournament_advance`` decides under
the tournament's lock, and the janitor's pass catches anything missed).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from django.db import DatabaseError, transaction

from digdown.results import GameResult
from ladder.common.exceptions import ApplicationError
from ladder.finishing.suspensions import bots_suspend_failing
from ladder.matches.claims import match_fail
from ladder.matches.models import Match
from ladder.matches.recording import (
    RecordOutcome,
    match_record_result,
    match_seat_logs_store,
)
from ladder.tournaments.services import tournament_advance

log = logging.getLogger("ladder.finishing")


def match_finish(
    *,
    match_id: int,
    result: GameResult,
    replay_bytes: bytes,
    seat_logs: Mapping[int, bytes] | None = None,
    k: float | None = None,
) -> RecordOutcome:
    """Record a played match exactly once, with its seats' logs; then suspend and advance.

    ``result`` is typed (``digdown.results.GameResult``: the runner checked the engine's
    result once when it built it), so nothing here re-reads a mapping field by field.

    ``seat_logs`` (seat number -> captured bytes) are kept only by the delivery
    that recorded the result. A second call for a finished match changes
    nothing (``recorded=False``) but still advances its tournament; a cancelled
    or errored match is refused with Conflict.
    """
    with transaction.atomic():
        # The logs are written with the seats' result (one UPDATE), not after it.
        outcome = match_record_result(
            match_id=match_id, result=result, replay_bytes=replay_bytes, k=k, seat_logs=seat_logs
        )
        if outcome.recorded and outcome.seats_failed:  # a clean result suspends nobody
            _after_record(match_id)
        _after_tournament_match(outcome.match)
    return outcome


def match_finish_errored(
    *,
    match_id: int,
    error: str,
    worker: str | None = None,
    attempt: int | None = None,
    seat_logs: Mapping[int, bytes] | None = None,
) -> Match:
    """Mark an open match errored (no rating change) with its seats' logs; then advance.

    A worker passes its claim (``worker``, ``attempt``): a match it no longer
    holds is not touched (Conflict), logs included.
    """
    with transaction.atomic():
        match = match_fail(match_id=match_id, error=error, worker=worker, attempt=attempt)
        if seat_logs:
            _keep_logs(match_id, seat_logs)
        _after_tournament_match(match)
    return match


def _keep_logs(match_id: int, seat_logs: Mapping[int, bytes]) -> None:
    """Store the seats' logs (owner-only; never in the replay) in a savepoint: logs that
    cannot be stored are a warning, never a lost result."""
    try:
        match_seat_logs_store(match_id=match_id, logs=seat_logs)
    except (ApplicationError, DatabaseError, OSError) as exc:
        log.warning("match %d: seats' logs not stored: %s", match_id, exc)


def _after_tournament_match(match: Match) -> None:
    tournament_id = match.tournament_id
    if tournament_id is None:
        return

    def advance_tournament() -> None:  # named: Django logs a robust callback's failure by name
        _advance_tournament(tournament_id)

    transaction.on_commit(advance_tournament, robust=True)


def _after_record(match_id: int) -> None:
    def suspend_failing_bots() -> None:  # named: Django logs a robust callback's failure by name
        _suspend_failing(match_id)

    transaction.on_commit(suspend_failing_bots, robust=True)


def _suspend_failing(match_id: int) -> None:
    """A bot that keeps failing is taken off the ladder; a failure here costs only this
    check (the next failing match checks again)."""
    try:
        bots_suspend_failing(match_id=match_id)
    except DatabaseError:
        log.exception("auto-suspend check after match %s failed", match_id)


def _advance_tournament(tournament_id: int) -> None:
    """The next Swiss round or the end, at once (exactly once: the service decides under
    the tournament's lock). A failure here costs only time: the janitor's pass advances
    what is left."""
    try:
        tournament_advance(tournament_id=tournament_id)
    except (ApplicationError, DatabaseError) as exc:
        log.warning("tournament %d not advanced (the janitor will): %s", tournament_id, exc)
