"""Creating matches: a user's challenge, the matchmaker's, a tournament's or a comparison's.

``match_create`` (one match) and ``matches_create`` (one per table of a duplicate deal)
check the bots, their versions, the ladder (``match_ladder``) and a user's challenge
quotas (``ladder.quotas``), and send each match to the workers when the transaction
commits. What a user asks for through the REST API or gRPC is
``ladder.matches.challenges``'.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from ladder.accounts.models import User
from ladder.bots import presence
from ladder.bots.models import Bot, BotVersion
from ladder.common.exceptions import ApplicationError, Conflict, NotFound, PermissionDenied
from ladder.ladders import Ladder, ladder_default, ladder_for, ladder_get, ladders
from ladder.matches.models import Match, MatchSeat
from ladder.matches.queue import match_enqueue_on_commit
from ladder.matches.spec import MatchSpec
from ladder.quotas import catalogue
from ladder.quotas.take import quota_take

OPEN_STATES = (Match.Status.QUEUED, Match.Status.RUNNING)


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
        match_enqueue_on_commit(match.pk, spec.priority)
        matches.append(match)
    return matches
