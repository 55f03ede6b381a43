"""Recording a finished match's result exactly once (and keeping its seats' logs).

``match_record_result`` is the single writer of a finished match; the rating
change is the ratings app's service (``ladder.ratings.services``), called inside
the recording transaction. Locks are always taken in the same order — the match
row, then the seated bots' rating entries on the match's ladder ordered by bot
id (``rating_entries_lock``) — so concurrent recordings never
deadlock on PostgreSQL; on SQLite the IMMEDIATE transactions serialize writers
instead (select_for_update is a no-op there). The state check under the match
lock makes a second call a no-op.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from digdown.results import GameResult, ResultError
from ladder.common import pagecache
from ladder.common.exceptions import ApplicationError, Conflict, NotFound
from ladder.common.logs import log_delete_later, log_store
from ladder.common.rows import rows_update
from ladder.matches.creation import OPEN_STATES
from ladder.matches.models import Match, MatchResult, MatchSeat
from ladder.matches.opponents import opponent_tallies_add
from ladder.matches.replays import replay_store
from ladder.matches.tournament_tallies import tournament_tallies_add
from ladder.ratings.services import (
    SeatIn,
    bot_ratings_ensure,
    rating_entries_lock,
    ratings_apply,
)

log = logging.getLogger("ladder.matches")


@dataclass(frozen=True)
class RecordOutcome:
    """``recorded`` is False when the match already had its result (a retry);
    ``seats_failed`` False when no seat of the result forfeited or faulted (nothing
    for the auto-suspend check to look at)."""

    match: Match
    recorded: bool
    seats_failed: bool = True


def _typed_result(result: GameResult | Mapping[str, Any], n: int) -> GameResult:
    """The result, typed and checked against ``n`` seats (a mapping, e.g. from a test or
    an older caller, is checked once here: ``GameResult.from_dict``)."""
    try:
        typed = result if isinstance(result, GameResult) else GameResult.from_dict(result, n)
    except ResultError as exc:
        raise ApplicationError(str(exc)) from None
    if len(typed.ranks) != n:
        raise ApplicationError(f"result: ranks must list one rank per seat ({n})")
    return typed


def match_record_result(
    *,
    match_id: int,
    result: GameResult | Mapping[str, Any],
    replay_bytes: bytes,
    k: float | None = None,
    seat_logs: Mapping[int, bytes] | None = None,
) -> RecordOutcome:
    """Record a finished match: result, seats, replay and ratings, exactly once.

    The replay is stored first under a content-addressed name (idempotent), then
    one transaction locks the match, checks it is still open, locks the seated
    bots' rating entries on the match's ladder by bot id, writes the MatchResult
    (one per match, enforced by the database), the seats, the entries' ratings
    and counters and the finished state. A second call for a finished match
    changes nothing and returns ``recorded=False``; a cancelled or errored match
    is refused with Conflict. ``seat_logs`` (seat number -> captured bytes, for
    the seats' owners) are stored beside the replay before the transaction and
    written with the seats' result, in the same UPDATE: a log that cannot be
    stored is a warning, never a lost result, and a recording that does not
    count deletes the files it stored. What follows a result (auto-suspend,
    tournament advance) is ``ladder.finishing.services.match_finish``'s.
    """
    # One read before any lock: is it open, and how many seats does the result need.
    current = (
        Match.objects.filter(pk=match_id)
        .annotate(seated=Count("seats"))
        .values_list("status", "seated")
        .first()
    )
    if current is None:
        raise NotFound("no such match")
    status, seated = current
    if status == Match.Status.FINISHED:
        return RecordOutcome(match=Match.objects.get(pk=match_id), recorded=False)
    if status not in OPEN_STATES:
        raise Conflict(f"match is {status}; its result cannot be recorded")
    typed = _typed_result(result, seated)
    stored = replay_store(match_id=match_id, data=replay_bytes)
    logs = _seat_logs_save(match_id, seat_logs) if seat_logs else {}
    try:
        outcome = _record(match_id, typed, stored, logs, k)
    except BaseException:
        _seat_logs_discard(logs)
        raise
    if not outcome.recorded:
        _seat_logs_discard(logs)
    return outcome


def _seat_logs_save(match_id: int, seat_logs: Mapping[int, bytes]) -> dict[int, tuple[str, int]]:
    """Store the seats' logs (seat -> stored name and size); none when storage fails."""
    stored: dict[int, tuple[str, int]] = {}
    try:
        for seat, data in seat_logs.items():
            name = str(PurePosixPath("logs", "matches", str(match_id), f"seat{seat}.log"))
            stored[seat] = (log_store(name=name, data=data), len(data))
    except (ApplicationError, OSError) as exc:
        log.warning("match %d: seats' logs not stored: %s", match_id, exc)
        _seat_logs_discard(stored)
        return {}
    return stored


def _seat_logs_discard(logs: Mapping[int, tuple[str, int]]) -> None:
    """Delete logs stored for a recording that did not count (best effort)."""
    for name, _ in logs.values():
        try:
            default_storage.delete(name)
        except OSError:
            log.warning("stored log %s of a recording that did not count not deleted", name)


def _record(
    match_id: int,
    result: GameResult,
    stored: Any,
    logs: Mapping[int, tuple[str, int]],
    k: float | None,
) -> RecordOutcome:
    """``match_record_result``'s transaction, the replay and the logs already stored."""
    k_used = float(settings.LADDER_ELO_K if k is None else k)
    # No savepoint of its own inside the caller's transaction (match_finish's): a failure
    # here rolls the caller's back too, which is what it does with the exception anyway.
    with transaction.atomic(savepoint=False):
        match = Match.objects.select_for_update().get(pk=match_id)
        # Refused or already recorded: decided under the lock, raised outside the block (an
        # exception inside it would doom the caller's transaction with no savepoint here).
        closed = match.status if match.status not in OPEN_STATES else None
        failed = True
        if closed is None:
            failed = _result_write(match, result, stored, logs, k_used)
    if closed == Match.Status.FINISHED:
        return RecordOutcome(match=match, recorded=False)
    if closed is not None:
        raise Conflict(f"match is {closed}; its result cannot be recorded")
    return RecordOutcome(match=match, recorded=True, seats_failed=failed)


def _result_write(
    match: Match,
    result: GameResult,
    stored: Any,
    logs: Mapping[int, tuple[str, int]],
    k_used: float,
) -> bool:
    """The writes of a result, the match locked and open; True when a seat forfeited or
    faulted (the auto-suspend check's business)."""
    seats = list(match.seats.order_by("seat"))
    bot_ids = [s.bot_id for s in seats]
    entries = rating_entries_lock(ladder=match.ladder, bot_ids=bot_ids)
    if match.ladder and len(entries) < len(set(bot_ids)):
        # Normally there since the bot's creation; a ladder configured later gets them
        # now (conflicts ignored), then they are locked as the others were.
        bot_ratings_ensure(bot_ids=bot_ids, ladder_keys=[match.ladder])
        entries = rating_entries_lock(ladder=match.ladder, bot_ids=bot_ids)
    # Allocated after every lock is held, so results that share a bot get ids
    # in the order their rating changes were applied (rerate relies on it).
    ranks = list(result.ranks)
    recorded = MatchResult.objects.create(
        match=match,
        reason=str(result.reason),
        winner=result.winner,
        turns=result.turns,
        rounds=result.rounds,
        data=result.to_dict(),
        elo_k=k_used if match.rated else 0.0,
    )
    changes = ratings_apply(
        entries=entries,
        seats=[SeatIn(s.bot_id, s.version_id, rank) for s, rank in zip(seats, ranks, strict=True)],
        k=k_used if match.rated else 0.0,
        result_id=recorded.pk,
        match_id=match.pk,
        recorded_at=recorded.recorded_at,
    )
    for n, (seat, rank, info) in enumerate(zip(seats, ranks, result.seats, strict=True)):
        if changes is not None:
            seat.rating_before, seat.rating_after = changes[n].before, changes[n].after
        seat.result = recorded
        seat.rank = rank
        seat.score = info.loot_points
        seat.faults = info.faults
        seat.ended = "" if info.ended is None else str(info.ended)
        seat.forfeit_reason = (info.reason or "forfeited")[:200] if info.forfeited else ""
        if seat.seat in logs:
            log_delete_later(seat.log.name)  # an earlier attempt's, once this commits
            seat.log, seat.log_size = logs[seat.seat]
    rows_update(
        seats,
        ["result", "rank", "score", "faults", "ended", "forfeit_reason", "rating_before",
         "rating_after", *(("log", "log_size") if logs else ())],
    )  # fmt: skip
    opponent_tallies_add(bot_ids=bot_ids, ranks=ranks)
    if match.tournament_id is not None:
        tournament_tallies_add(tournament_id=match.tournament_id, bot_ids=bot_ids, ranks=ranks)
    match.status = Match.Status.FINISHED
    match.finished_at = timezone.now()
    match.lease_expires_at = None
    match.replay.name = stored.name
    match.replay_sha256 = stored.sha256
    match.replay_size = stored.size
    match.error = ""
    match.save(
        update_fields=[
            "status", "finished_at", "lease_expires_at", "replay", "replay_sha256",
            "replay_size", "error",
        ]
    )  # fmt: skip
    # Cached pages show ratings and records: a new generation once this is visible.
    pagecache.pages_changed()
    return any(s.ended == MatchSeat.Ended.FORFEITED or s.faults > 0 for s in seats)


def match_seat_logs_store(*, match_id: int, logs: Mapping[int, bytes]) -> list[MatchSeat]:
    """Keep the captured logs of a match's hosted seats (by seat number), for their owners.

    Called once per played attempt that counted (the result it recorded, or the
    error the match ended with); a log it replaces is deleted after commit.
    """
    stored = {
        seat: log_store(
            name=str(PurePosixPath("logs", "matches", str(match_id), f"seat{seat}.log")),
            data=data,
        )
        for seat, data in logs.items()
    }
    with transaction.atomic():
        seats = list(
            MatchSeat.objects.select_for_update().filter(match_id=match_id, seat__in=list(stored))
        )
        for seat in seats:
            log_delete_later(seat.log.name)
            seat.log = stored[seat.seat]
            seat.log_size = len(logs[seat.seat])
            seat.save(update_fields=["log", "log_size"])
    return seats
