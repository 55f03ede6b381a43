"""Match services: create (a challenge), claim, record the result exactly once, cancel.

The workers' side of a match's life is here too, as writes the worker calls:
claim (``match_start``), renew the claim's lease (``match_heartbeat``), give
it back for a retry (``match_release``), fail it, and the janitor's
``match_requeue_stale``. Every write a worker makes while holding a claim is
fenced by that claim (worker name and attempt number), so a worker whose lease
expired and was taken over can no longer change the match.

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
import secrets
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from digdown.results import GameResult, ResultError
from ladder.accounts.models import User
from ladder.bots import presence
from ladder.bots.models import Bot, BotVersion
from ladder.common import pagecache
from ladder.common.exceptions import ApplicationError, Conflict, NotFound, PermissionDenied
from ladder.common.logs import log_delete_later, log_store
from ladder.common.rows import rows_update
from ladder.ladders import Ladder, ladder_default, ladder_for, ladder_get, ladders
from ladder.matches.models import Match, MatchResult, MatchSeat
from ladder.matches.opponents import opponent_tallies_add
from ladder.matches.queue import match_enqueue
from ladder.matches.replays import replay_store
from ladder.matches.spec import MatchSpec
from ladder.matches.tournament_tallies import tournament_tallies_add, tournament_tallies_errored
from ladder.quotas import catalogue
from ladder.quotas.take import quota_take
from ladder.ratings.services import (
    SeatIn,
    bot_ratings_ensure,
    rating_entries_lock,
    ratings_apply,
)

log = logging.getLogger("ladder.matches")
OPEN_STATES = (Match.Status.QUEUED, Match.Status.RUNNING)


@dataclass(frozen=True)
class RecordOutcome:
    """``recorded`` is False when the match already had its result (a retry);
    ``seats_failed`` False when no seat of the result forfeited or faulted (nothing
    for the auto-suspend check to look at)."""

    match: Match
    recorded: bool
    seats_failed: bool = True


@dataclass
class JanitorReport:
    """What one janitor pass did (match ids)."""

    requeued: list[int] = field(default_factory=list)  # lease expired: queued again
    resent: list[int] = field(default_factory=list)  # queued, message presumed lost
    errored: list[int] = field(default_factory=list)  # lease expired on the last attempt

    def __bool__(self) -> bool:
        return bool(self.requeued or self.resent or self.errored)


def _enqueue_on_commit(match_id: int, priority: int = 0) -> None:
    """Send the match to the workers once the transaction that made it queued commits.

    ``robust``: a broker that is down must not undo or fail the write; the match
    stays queued and the janitor sends it again later.
    """

    def send() -> None:  # a named function: Django logs a robust callback's failure by name
        match_enqueue(match_id=match_id, priority=priority)

    transaction.on_commit(send, robust=True)


def match_ladder(
    *, seats: int, ladder: str | None = None, difficulty: str | None = None, rated: bool = True
) -> tuple[Ladder | None, str, str]:
    """The ladder a new match is played on, and its ruleset and difficulty.

    A named ladder fixes the difficulty (asking for another one is an error).
    Without one, the default ladder's ruleset at ``difficulty`` (default: the
    default ladder's) is rated by whichever ladder plays it with that many
    seats; if none does, only an unrated match can be played (off-ladder).
    """
    if difficulty is not None and difficulty not in Match.Difficulty.values:
        raise ApplicationError(f"difficulty must be one of {', '.join(Match.Difficulty.values)}")
    if ladder:
        chosen: Ladder | None = ladder_get(ladder)
        assert chosen is not None
        if difficulty and difficulty != chosen.difficulty:
            raise ApplicationError(
                f"ladder {chosen.key} plays {chosen.difficulty}, not {difficulty}"
            )
        if not chosen.plays(seats):
            raise ApplicationError(
                f"ladder {chosen.key} plays {chosen.min_seats} to {chosen.max_seats} seats,"
                f" not {seats}"
            )
        return chosen, chosen.ruleset, chosen.difficulty
    default = ladder_default()
    difficulty = difficulty or default.difficulty
    chosen = ladder_for(ruleset=default.ruleset, difficulty=difficulty, seats=seats)
    if chosen is None and rated:
        raise Conflict(
            f"no ladder rates {default.ruleset} at {difficulty} with {seats} seats"
            f" (ladders: {', '.join(lad.describe() for lad in ladders().values())});"
            " ask for an unrated match"
        )
    return chosen, default.ruleset, difficulty


def match_create(spec: MatchSpec | None = None, /, **fields: Any) -> Match:
    """Queue a match between 2-4 distinct playable bots, seated in the given order.

    ``spec`` says what to play (``MatchSpec``; or its fields as keywords, for a
    short call). A user (a challenge) must own one of the bots unless staff;
    ``requested_by=None`` is the matchmaker. Each seat plays the bot's current
    version (its newest valid one) unless ``versions`` pins one. The ladder
    decides the ruleset, the difficulty and whose ratings a rated match changes
    (``match_ladder``). The match is sent to the workers when the transaction
    commits.
    """
    spec = MatchSpec.of(spec, fields)
    with transaction.atomic():
        return matches_create(spec, tables=[list(spec.bot_ids)])[0]


def match_seed(seed: int | None) -> int:
    """``seed`` checked, or a fresh random one (the dealt cave)."""
    if seed is None:
        return secrets.randbelow(2**63)
    if not 0 <= seed < 2**63:
        raise ApplicationError("seed must be in [0, 2^63)")
    return seed


def _versions(bots: Mapping[int, Bot], pinned: Mapping[int, int] | None) -> dict[int, int]:
    """The version each bot plays: its current one, or the VALID one ``pinned`` names."""
    pinned = dict(pinned or {})
    stray = set(pinned) - set(bots)
    if stray:
        raise ApplicationError(f"versions given for bots not seated: {sorted(stray)}")
    if pinned:
        found = {v.pk: v for v in BotVersion.objects.filter(pk__in=list(pinned.values()))}
        for bot_id, version_id in pinned.items():
            version = found.get(version_id)
            if version is None or version.bot_id != bot_id:
                raise NotFound(f"bot {bots[bot_id].name} has no version with id {version_id}")
            if version.status != BotVersion.Status.VALID:
                raise Conflict(f"{version} is {version.status}: only valid versions play")
    versions: dict[int, int] = {}
    for bot in bots.values():
        if not bot.playable:
            raise Conflict(f"bot {bot.name} is not active")
        if bot.pk in pinned:
            versions[bot.pk] = pinned[bot.pk]
            continue
        if bot.current_version_id is None:
            raise Conflict(
                f"bot {bot.name} has no valid version yet (a new hosted version becomes "
                "valid once it has played its smoke match)"
            )
        versions[bot.pk] = bot.current_version_id
    return versions


def absent_connected_refuse(bots: Iterable[Bot]) -> None:
    """Conflict when a connected bot among ``bots`` holds no open Play stream: its seat would
    forfeit, so a user's challenge (or comparison) naming one is refused, not queued (the
    matchmaker offers connected bots only while connected; a worker voids a match whose
    connected bot is gone when it starts, with no forfeit)."""
    absent = presence.absent_connected(bots)
    if absent:
        names = ", ".join(sorted(b.name for b in absent))
        raise Conflict(
            f"connected bot(s) {names} hold no open Play stream: a connected bot can be"
            " challenged only while it is connected"
        )


def _challenges_held(user: User, since: datetime) -> dict[catalogue.Quota, int]:
    """A user's challenges (matches they asked for, not a tournament's; a duplicate deal
    counts one per match it queues): open ones, and those made since ``since``."""
    counts = Match.objects.filter(requested_by=user, tournament__isnull=True).aggregate(
        open=Count("pk", filter=Q(status__in=OPEN_STATES)),
        today=Count("pk", filter=Q(created_at__gte=since)),
    )  # one query for both
    return {
        catalogue.OPEN_CHALLENGES: counts["open"],
        catalogue.CHALLENGES_PER_DAY: counts["today"],
    }


def matches_create(
    spec: MatchSpec, *, tables: Sequence[Sequence[int]], deal_id: int | None = None
) -> list[Match]:
    """Create one match per table (the same bots as ``spec.bot_ids`` in every table, in
    seat order), on one seed; rotation index = table index when ``deal_id`` is given
    (``ladder.tournaments.services.deal_create``). Call inside a transaction: the
    matches are sent to the workers when it commits."""
    seed = match_seed(spec.seed)
    ids = list(tables[0])
    if not 2 <= len(ids) <= 4:
        raise ApplicationError("a match has 2 to 4 bots")
    if len(set(ids)) != len(ids):
        raise ApplicationError("a bot cannot take two seats")
    chosen, ruleset, difficulty = match_ladder(
        seats=len(ids), ladder=spec.ladder, difficulty=spec.difficulty, rated=spec.rated
    )
    bots = {b.pk: b for b in Bot.objects.filter(pk__in=ids)}
    missing = [i for i in ids if i not in bots]
    if missing:
        raise NotFound(f"no such bot: {', '.join(map(str, missing))}")
    requested_by = spec.requested_by
    owner = None if requested_by is None or requested_by.is_staff else requested_by.pk
    if owner is not None and not any(b.owner_id == owner for b in bots.values()):
        raise PermissionDenied("a challenge must include one of your own bots")
    if requested_by is not None and spec.tournament_id is None:
        quota_take(requested_by, partial(_challenges_held, requested_by), adding=len(tables))
    if requested_by is not None:
        absent_connected_refuse(bots.values())
    chosen_versions = _versions(bots, spec.versions)
    matches = []
    for rotation, table in enumerate(tables):
        match = Match(
            ladder=chosen.key if chosen else "",
            ruleset=ruleset,
            seed=seed,
            difficulty=difficulty,
            rated=spec.rated,
            tournament_id=spec.tournament_id,
            tournament_round=spec.tournament_round,
            deal_id=deal_id,
            deal_rotation=rotation if deal_id is not None else None,
            priority=spec.priority,
            requested_by=requested_by,
            enqueued_at=timezone.now(),
        )
        # Field checks only: the rows it points at were just read, and the database
        # enforces the constraints itself (checking them here costs a query each).
        match.full_clean(exclude=["requested_by", "tournament", "deal"], validate_constraints=False)
        match.save()
        MatchSeat.objects.bulk_create(
            MatchSeat(match=match, seat=n, bot_id=i, version_id=chosen_versions[i])
            for n, i in enumerate(table)
        )
        _enqueue_on_commit(match.pk, spec.priority)
        matches.append(match)
    return matches


def match_start(
    *, match_id: int, worker: str, lease_seconds: float = 600, max_attempts: int | None = None
) -> Match:
    """Claim a queued match (or one whose lease expired) for a worker.

    The claim is conditional (the row is locked and its state checked), so a
    second delivery of the same match finds it taken (Conflict). With
    ``max_attempts``, a match already claimed that many times is errored
    instead of claimed again (Conflict too): a match that kills its worker
    every time must not loop forever (each redelivery would kill the next worker).
    """
    with transaction.atomic():
        match = Match.objects.select_for_update().filter(pk=match_id).first()
        if match is None:
            raise NotFound("no such match")
        now = timezone.now()
        expired = match.status == Match.Status.RUNNING and (
            match.lease_expires_at is None or match.lease_expires_at < now
        )
        if match.status != Match.Status.QUEUED and not expired:
            raise Conflict(f"match is {match.status}")
        exhausted = max_attempts is not None and match.attempts >= max_attempts
        if exhausted:
            # Written, then refused after the commit (raising inside would roll it back).
            _errored(match, f"gave up after {match.attempts} attempts; last: {match.error or '-'}")
        else:
            match.status = Match.Status.RUNNING
            match.attempts += 1
            match.claimed_by = worker[:100]
            match.started_at = match.started_at or now
            match.lease_expires_at = now + timedelta(seconds=lease_seconds)
            match.save(
                update_fields=["status", "attempts", "claimed_by", "started_at", "lease_expires_at"]
            )
    if exhausted:
        raise Conflict(f"match is errored after {match.attempts} attempts")
    return match


def _held(match_id: int, worker: str, attempt: int) -> Any:
    """The match row, only while this claim (worker, attempt) still holds it."""
    return Match.objects.filter(
        pk=match_id, status=Match.Status.RUNNING, claimed_by=worker[:100], attempts=attempt
    )


def match_heartbeat(*, match_id: int, worker: str, attempt: int, lease_seconds: float) -> bool:
    """Renew a claim's lease; False when the claim is gone (taken over, cancelled, finished)."""
    expires = timezone.now() + timedelta(seconds=lease_seconds)
    return _held(match_id, worker, attempt).update(lease_expires_at=expires) == 1


@transaction.atomic
def match_release(*, match_id: int, worker: str, attempt: int, error: str) -> bool:
    """Give a claimed match back to the queue for a retry (no rating change, no result).

    The caller sends the retry message (Celery's retry, with backoff);
    ``enqueued_at`` is set so the janitor leaves it alone meanwhile. False
    when the claim is no longer this worker's (nothing changed).
    """
    released = _held(match_id, worker, attempt).update(
        status=Match.Status.QUEUED,
        claimed_by="",
        lease_expires_at=None,
        enqueued_at=timezone.now(),
        error=f"attempt {attempt}: {error}"[:10000],
    )
    return released == 1


def _errored(match: Match, error: str, *, counted: list[tuple[int, int]] | None = None) -> None:
    """An open match (locked by the caller) turns errored; a tournament's counts it.

    ``counted``: the (tournament, bot) seats to count are added to it, for a caller
    that errors several matches in one transaction and counts them all at once in
    the counters' lock order (``tournament_tallies_errored``); else counted now.
    """
    if match.tournament_id is not None:
        seats = [(match.tournament_id, b) for b in match.seats.values_list("bot_id", flat=True)]
        if counted is None:
            tournament_tallies_errored(seats=seats)
        else:
            counted.extend(seats)
    match.status = Match.Status.ERRORED
    match.error = error[:10000]
    match.finished_at = timezone.now()
    match.lease_expires_at = None
    match.save(update_fields=["status", "error", "finished_at", "lease_expires_at"])


@transaction.atomic
def match_requeue_stale(
    *,
    queued_grace_s: float,
    max_attempts: int,
    now: datetime | None = None,
    limit: int = 1000,
) -> JanitorReport:
    """The janitor: put matches whose worker was lost back in play; resend lost messages.

    - running with an expired lease (its worker died or hung): queued again
      and re-sent, or errored when it already had ``max_attempts`` claims;
    - queued whose last message is older than ``queued_grace_s`` (a broker that
      restarted without persistence, a publish that failed): re-sent.

    Safe to run any time and from anywhere: claiming is conditional, so a
    message sent for a match that is played meanwhile is a no-op. At most
    ``limit`` matches of each kind per pass, oldest first.
    """
    now = now or timezone.now()
    report = JanitorReport()
    expired = Match.objects.filter(status=Match.Status.RUNNING, lease_expires_at__lt=now)
    errored_seats: list[tuple[int, int]] = []  # counted together: one lock order
    for match in expired.select_for_update().order_by("lease_expires_at", "pk")[:limit]:
        if match.attempts >= max_attempts:
            _errored(
                match,
                f"worker lost on attempt {match.attempts} of {max_attempts}",
                counted=errored_seats,
            )
            report.errored.append(match.pk)
            continue
        match.status = Match.Status.QUEUED
        match.error = f"attempt {match.attempts}: lease expired (worker lost)"
        match.claimed_by = ""
        match.lease_expires_at = None
        match.enqueued_at = now
        match.save(
            update_fields=["status", "error", "claimed_by", "lease_expires_at", "enqueued_at"]
        )
        report.requeued.append(match.pk)
    if errored_seats:
        tournament_tallies_errored(seats=errored_seats)
    stale = now - timedelta(seconds=queued_grace_s)
    lost = Match.objects.filter(status=Match.Status.QUEUED).filter(
        Q(enqueued_at__lt=stale) | Q(enqueued_at__isnull=True, created_at__lt=stale)
    )
    report.resent = list(lost.order_by("enqueued_at", "pk").values_list("pk", flat=True)[:limit])
    Match.objects.filter(pk__in=report.resent, status=Match.Status.QUEUED).update(enqueued_at=now)
    priorities = dict(
        Match.objects.filter(pk__in=report.requeued + report.resent).values_list("pk", "priority")
    )
    for match_id in report.requeued + report.resent:
        _enqueue_on_commit(match_id, priorities.get(match_id, 0))
    if report:
        log.info(
            "janitor: requeued %s (lease expired), resent %s (message lost), errored %s",
            report.requeued, report.resent, report.errored,
        )  # fmt: skip
    return report


@transaction.atomic
def match_resend_queued(*, match_ids: Collection[int], now: datetime | None = None) -> list[int]:
    """Send again the messages of these matches, those still ``queued`` (the janitor's
    early pass: messages a dead worker had taken but never started). A message that
    turns up late anyway is a duplicate, skipped by the claim."""
    now = now or timezone.now()
    queued = Match.objects.select_for_update().filter(pk__in=match_ids, status=Match.Status.QUEUED)
    resent = dict(queued.order_by("pk").values_list("pk", "priority"))
    Match.objects.filter(pk__in=resent).update(enqueued_at=now)
    for match_id, priority in resent.items():
        _enqueue_on_commit(match_id, priority)
    if resent:
        log.info("janitor: resent %s (taken by a worker that is gone)", list(resent))
    return list(resent)


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


@transaction.atomic
def match_fail(
    *, match_id: int, error: str, worker: str | None = None, attempt: int | None = None
) -> Match:
    """Mark an open match errored (no rating change).

    A worker passes its claim (``worker``, ``attempt``): a match it no longer
    holds is not touched (Conflict).
    """
    match = Match.objects.select_for_update().filter(pk=match_id).first()
    if match is None:
        raise NotFound("no such match")
    if match.status not in OPEN_STATES:
        raise Conflict(f"match is {match.status}")
    if worker is not None and (match.claimed_by, match.attempts) != (worker[:100], attempt):
        raise Conflict("the match is no longer held by this worker")
    _errored(match, error)
    return match


@transaction.atomic
def match_cancel(*, match_id: int, user: User | None, reason: str = "") -> Match:
    """Cancel a queued or running match (staff, or the system with ``user=None``)."""
    if user is not None and not user.is_staff:
        raise PermissionDenied("only staff can cancel matches")
    match = Match.objects.select_for_update().filter(pk=match_id).first()
    if match is None:
        raise NotFound("no such match")
    if match.status == Match.Status.CANCELLED:
        return match
    if match.status not in OPEN_STATES:
        raise Conflict(f"match is {match.status}; only queued or running matches can be cancelled")
    match.status = Match.Status.CANCELLED
    match.error = (reason or "cancelled")[:10000]
    match.finished_at = timezone.now()
    match.lease_expires_at = None
    match.save(update_fields=["status", "error", "finished_at", "lease_expires_at"])
    return match


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
