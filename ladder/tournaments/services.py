"""Tournament, duplicate-deal and version-comparison services: create, schedule, advance.

Schedules come from the pure ``formats`` (round robin, Swiss pairing) and
become matches (``ladder.matches.creation``) or duplicate deals (``deal_create``; one
transaction per step; the matches are sent to the workers on commit, with
``EVENT_PRIORITY`` so a free worker plays them before ladder matches).

A tournament advances in ``tournament_advance``: called once a tournament match
is recorded or errored (``ladder.finishing.services``), and by the janitor's periodic
pass for anything missed (a cancelled match, a worker that died between the
two). It locks the tournament row and acts only when no match of it is open,
so however often and concurrently it is called, each Swiss round is created
once and the tournament finishes once.
"""

from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from ladder.accounts.models import User
from ladder.bots.models import Bot, BotVersion
from ladder.common.exceptions import ApplicationError, Conflict, NotFound, PermissionDenied
from ladder.ladders import ladder_default
from ladder.matches.creation import (
    OPEN_STATES,
    absent_connected_refuse,
    match_create,
    match_ladder,
    match_seed,
    matches_create,
)
from ladder.matches.models import Match, MatchSeat
from ladder.matches.spec import MatchSpec
from ladder.matches.tournament_tallies import tournament_tallies_bye
from ladder.quotas import catalogue
from ladder.quotas.take import quota_take
from ladder.ratings.models import BotRating
from ladder.tournaments.formats import round_robin, swiss_pairing, swiss_rounds
from ladder.tournaments.models import Deal, Tournament, TournamentBye, VersionComparison
from ladder.tournaments.rotations import rotations
from ladder.tournaments.standings import Outcome, standings

log = logging.getLogger("ladder.tournaments")

# Match.priority of tournament and comparison matches (0 is a ladder match; 1 a private
# tournament's, ladder.competitions: played after these, before the ladder's).
EVENT_PRIORITY = 2


def deal_create(
    spec: MatchSpec | None = None,
    /,
    *,
    comparison: VersionComparison | None = None,
    comparison_index: int | None = None,
    comparison_side: str = "",
    **fields: Any,
) -> Deal:
    """Queue a duplicate deal: one seed, one match per seat rotation of ``spec.bot_ids``.

    Rotation r seats ``bot_ids[(s - r) mod n]`` in seat s
    (``ladder.tournaments.rotations``), so each bot plays every seat of the same
    cave. The deal and its n matches are created in one transaction (all or
    nothing) and sent to the workers when it commits. ``spec`` as ``match_create``
    (or its fields as keywords); the comparison ones tie the deal to a version
    comparison.
    """
    spec = MatchSpec.of(spec, fields)
    seed = match_seed(spec.seed)  # one seed for the deal and every rotation
    spec = replace(spec, seed=seed)
    ids = list(spec.bot_ids)
    with transaction.atomic():
        deal = Deal(
            seed=seed,
            seats=len(ids),
            tournament_id=spec.tournament_id,
            comparison=comparison,
            comparison_index=comparison_index,
            comparison_side=comparison_side,
        )
        deal.save()
        matches_create(spec, tables=rotations(ids), deal_id=deal.pk)
    return deal


def _staff(user: User | None) -> None:
    if user is not None and not user.is_staff:
        raise PermissionDenied("only staff can create or start tournaments")


def tournament_create(
    *,
    name: str,
    participant_ids: Sequence[int],
    format: str = Tournament.Format.ROUND_ROBIN,
    seats: int = 2,
    duplicate: bool = False,
    rated: bool = False,
    rounds: int | None = None,
    ladder: str = "",
    created_by: User | None = None,
    start: bool = True,
) -> Tournament:
    """Create a tournament (staff, or the system with ``created_by=None``) and, with
    ``start``, schedule its matches at once (``tournament_start``).

    Round robin: every group of ``seats`` participants plays (balanced seats, or a
    duplicate deal per group). Swiss: 2 seats, ``rounds`` rounds (default
    ⌈log2 n⌉), paired round by round as results come in. Unrated unless ``rated``
    (then the ladder must rate ``seats``-seat matches).
    """
    _staff(created_by)
    name = name.strip()
    if not name:
        raise ApplicationError("a tournament needs a name")
    if format not in Tournament.Format.values:
        raise ApplicationError(f"format must be one of {', '.join(Tournament.Format.values)}")
    ids = list(participant_ids)
    if len(set(ids)) != len(ids):
        raise ApplicationError("participants must be distinct")
    if not 2 <= seats <= 4:
        raise ApplicationError("seats must be 2 to 4")
    if format == Tournament.Format.SWISS:
        if seats != 2:
            raise ApplicationError("a Swiss tournament has 2 seats")
        if rounds is not None and not 1 <= rounds < len(ids):
            raise ApplicationError(f"a Swiss of {len(ids)} bots has 1 to {len(ids) - 1} rounds")
    elif rounds is not None:
        raise ApplicationError("rounds are for Swiss tournaments")
    if len(ids) < max(seats, 2):
        raise ApplicationError(f"a {seats}-seat tournament needs at least {seats} participants")
    match_ladder(seats=seats, ladder=ladder or None, rated=rated)  # refuses what cannot be played
    with transaction.atomic():
        found = set(Bot.objects.filter(pk__in=ids).values_list("pk", flat=True))
        missing = [i for i in ids if i not in found]
        if missing:
            raise NotFound(f"no such bot: {', '.join(map(str, missing))}")
        if Tournament.objects.filter(name=name).exists():
            raise Conflict(f"a tournament named {name!r} exists")
        tournament = Tournament(
            name=name,
            format=format,
            seats=seats,
            duplicate=duplicate,
            rated=rated,
            rounds=rounds,
            ladder=ladder,
            created_by=created_by,
        )
        tournament.full_clean(exclude=["created_by"], validate_constraints=False)
        try:
            tournament.save()
        except IntegrityError as exc:  # the same name, created meanwhile
            raise Conflict(f"a tournament named {name!r} exists") from exc
        tournament.participants.set(ids)
        if start:
            tournament = tournament_start(tournament_id=tournament.pk, user=created_by)
    return tournament


@transaction.atomic
def tournament_start(*, tournament_id: int, user: User | None = None) -> Tournament:
    """Schedule a pending tournament (all of a round robin, round 1 of a Swiss) and make it
    running; a tournament already started is returned as it is."""
    _staff(user)
    tournament = Tournament.objects.select_for_update().filter(pk=tournament_id).first()
    if tournament is None:
        raise NotFound("no such tournament")
    if tournament.status != Tournament.Status.PENDING:
        return tournament
    ids = sorted(tournament.participants.values_list("pk", flat=True))
    if len(ids) < tournament.seats:
        raise Conflict(f"{tournament.name} needs at least {tournament.seats} participants")
    if tournament.format == Tournament.Format.SWISS:
        if tournament.rounds is None:
            tournament.rounds = swiss_rounds(len(ids))
        if not _swiss_round(tournament, 1):
            raise Conflict(f"fewer than 2 participants of {tournament.name} can play")
    else:
        plan = round_robin(ids, tournament.seats, duplicate=tournament.duplicate)
        done: set[int] = set()
        for planned in plan:
            if planned.deal is None:
                _play(tournament, planned.seats, round_=None, as_deal=False)
            elif planned.deal not in done:  # its first rotation: the table in order
                done.add(planned.deal)
                _play(tournament, planned.seats, round_=None, as_deal=True)
    tournament.status = Tournament.Status.RUNNING
    tournament.started_at = timezone.now()
    tournament.save(update_fields=["status", "started_at", "rounds"])
    log.info("tournament %s started (%s)", tournament.pk, tournament.format)
    return tournament


def _play(
    tournament: Tournament, table: Sequence[int], *, round_: int | None, as_deal: bool
) -> None:
    """Queue one table of the tournament: a match, or a duplicate deal of it."""
    spec = MatchSpec(
        bot_ids=table,
        rated=tournament.rated,
        tournament_id=tournament.pk,
        ladder=tournament.ladder or None,
        priority=EVENT_PRIORITY,
        tournament_round=round_,
    )
    if as_deal:
        deal_create(spec)
    else:
        match_create(spec)


def _order(tournament: Tournament, ids: Sequence[int]) -> list[int]:
    """The Swiss initial ranking: rating on the tournament's ladder, best first; then id."""
    key = tournament.ladder or ladder_default().key
    ratings = dict(
        BotRating.objects.filter(ladder=key, bot_id__in=ids).values_list("bot_id", "rating")
    )
    return sorted(ids, key=lambda b: (-ratings.get(b, 0), b))


def _swiss_round(tournament: Tournament, number: int) -> bool:
    """Pair and schedule Swiss round ``number`` from the results so far (no rematch).

    A participant that can no longer play (suspended, retired, no valid version)
    is withdrawn from later rounds and keeps its results, so one dead bot cannot
    stall the tournament.
    """
    everyone = list(tournament.participants.values_list("pk", flat=True))
    ids = list(
        tournament.participants.filter(
            is_active=True, retired_at__isnull=True, current_version__isnull=False
        ).values_list("pk", flat=True)
    )
    seats = (
        MatchSeat.objects.filter(match__tournament=tournament)
        .order_by("match_id", "seat")
        .values_list("match_id", "match__status", "bot_id", "seat", "rank")
    )
    by_match: dict[int, list[tuple[int, int | None]]] = {}
    errored: set[int] = set()
    balance: Counter[int] = Counter()
    for match_id, status, bot, seat, rank in seats:
        by_match.setdefault(match_id, []).append((bot, rank))
        balance[bot] += 1 if seat == 0 else -1
        if status != Match.Status.FINISHED:
            errored.add(match_id)
    outcomes = [
        Outcome(seats=[b for b, _ in s], ranks=None if m in errored else [r or 0 for _, r in s])
        for m, s in by_match.items()
    ]
    byes = list(tournament.byes.values_list("bot_id", flat=True))
    table = standings(everyone, outcomes, byes=byes, swiss=True)
    points = {row.bot: row.points for row in table}
    played = {frozenset(b for b, _ in s) for s in by_match.values()}
    if len(ids) < 2:
        return False  # nobody left to pair: the tournament finishes
    rng = random.Random(f"{tournament.pk}:{number}")  # reproducible seat choices
    pairing = swiss_pairing(_order(tournament, ids), points, played, byes, balance, rng)
    if pairing.bye is not None:
        TournamentBye.objects.create(tournament=tournament, round=number, bot_id=pairing.bye)
        tournament_tallies_bye(tournament_id=tournament.pk, bot_id=pairing.bye)
    for pair in pairing.pairs:
        _play(tournament, pair, round_=number, as_deal=tournament.duplicate)
    log.info(
        "tournament %s: round %d paired %s, bye %s",
        tournament.pk,
        number,
        pairing.pairs,
        pairing.bye,
    )
    return True


def tournament_advance(*, tournament_id: int) -> Tournament | None:
    """Next Swiss round, or finished, once no match of the tournament is open.

    Exactly once under any number of concurrent calls: the tournament row is
    locked and the state re-read under the lock (a call that finds a round's
    matches open, or the tournament finished, changes nothing).
    """
    with transaction.atomic():
        tournament = Tournament.objects.select_for_update().filter(pk=tournament_id).first()
        if tournament is None or tournament.status != Tournament.Status.RUNNING:
            return tournament
        if Match.objects.filter(tournament=tournament, status__in=OPEN_STATES).exists():
            return tournament
        if tournament.format == Tournament.Format.SWISS:
            last = Match.objects.filter(tournament=tournament).aggregate(r=Max("tournament_round"))
            byes = tournament.byes.aggregate(r=Max("round"))
            played = max(last["r"] or 0, byes["r"] or 0)
            if played < (tournament.rounds or 0) and _swiss_round(tournament, played + 1):
                return tournament
        tournament.status = Tournament.Status.FINISHED
        tournament.finished_at = timezone.now()
        tournament.save(update_fields=["status", "finished_at"])
        log.info("tournament %s finished", tournament.pk)
        return tournament


def tournaments_advance_running() -> list[int]:
    """The periodic pass: advance every running tournament with no open match (ids)."""
    idle = Tournament.objects.filter(status=Tournament.Status.RUNNING).exclude(
        matches__status__in=OPEN_STATES
    )
    advanced = []
    for tournament_id in idle.values_list("pk", flat=True).distinct():
        tournament_advance(tournament_id=tournament_id)
        advanced.append(tournament_id)
    return advanced


# --- version comparisons ------------------------------------------------------------


def _comparisons_held(user: User, since: datetime) -> dict[catalogue.Quota, int]:
    """A user's comparisons still being played, and those made since ``since``: each
    queues 2 x deals x seats matches at a priority above the ladder's, so many at once
    (or one after another all day) would take the workers from everyone. Tournaments
    need no quota: only staff create or start them (``_staff``)."""
    mine = VersionComparison.objects.filter(requested_by=user)
    playing = mine.filter(deal_set__matches__status__in=OPEN_STATES).values("pk").distinct()
    return {
        catalogue.OPEN_COMPARISONS: playing.count(),
        catalogue.COMPARISONS_PER_DAY: mine.filter(created_at__gte=since).count(),
    }


def comparison_create(
    *,
    user: User,
    bot_id: int,
    old_version: int,
    new_version: int,
    opponent_ids: Sequence[int],
    deals: int,
    ladder: str = "",
) -> VersionComparison:
    """Ask "is version ``new_version`` of my bot better than ``old_version``?" (numbers).

    ``deals`` seeds, each dealt twice (old and new version) against the same
    ``opponent_ids`` (1-3 bots) in every seat rotation: 2 * deals * seats
    unrated matches, played before ladder matches. The owner of the bot (or
    staff) asks; at most ``LADDER_COMPARISON_MAX_DEALS`` deals, and the user's quotas
    (``ladder.quotas``: comparisons still being played, comparisons per day).
    """
    bot = Bot.objects.filter(pk=bot_id).first()
    if bot is None:
        raise NotFound("no such bot")
    if bot.owner_id != user.pk and not user.is_staff:
        raise PermissionDenied(f"bot {bot.name} belongs to another user")
    limit = settings.LADDER_COMPARISON_MAX_DEALS
    if not 2 <= deals <= limit:
        raise ApplicationError(f"deals must be 2 to {limit}")
    opponents = list(opponent_ids)
    if not 1 <= len(opponents) <= 3:
        raise ApplicationError("a comparison needs 1 to 3 opponents")
    if bot.pk in opponents or len(set(opponents)) != len(opponents):
        raise ApplicationError("opponents must be distinct other bots")
    if old_version == new_version:
        raise ApplicationError("compare two different versions")
    versions = {
        v.number: v
        for v in BotVersion.objects.filter(bot=bot, number__in=[old_version, new_version])
    }
    for number in (old_version, new_version):
        if number not in versions:
            raise NotFound(f"bot {bot.name} has no version {number}")
        if versions[number].status != BotVersion.Status.VALID:
            raise Conflict(
                f"{bot.name} v{number} is {versions[number].status}: only valid versions play"
            )
    table = [bot.pk, *opponents]
    match_ladder(seats=len(table), ladder=ladder or None, rated=False)
    absent_connected_refuse(Bot.objects.filter(pk__in=table))
    rng = random.SystemRandom()
    with transaction.atomic():
        quota_take(user, partial(_comparisons_held, user))
        comparison = VersionComparison.objects.create(
            bot=bot,
            old_version=versions[old_version],
            new_version=versions[new_version],
            deals=deals,
            ladder=ladder,
            requested_by=user,
        )
        comparison.opponents.set(opponents)
        for index in range(deals):
            seed = rng.randrange(2**63)
            for side, version in ((Deal.Side.OLD, old_version), (Deal.Side.NEW, new_version)):
                deal_create(
                    MatchSpec(
                        bot_ids=table,
                        requested_by=None,  # the owner asked for the comparison, checked above
                        seed=seed,
                        rated=False,
                        ladder=ladder or None,
                        versions={bot.pk: versions[version].pk},
                        priority=EVENT_PRIORITY,
                    ),
                    comparison=comparison,
                    comparison_index=index,
                    comparison_side=side,
                )
    log.info(
        "comparison %s: %s v%d vs v%d over %d deals",
        comparison.pk,
        bot.name,
        old_version,
        new_version,
        deals,
    )
    return comparison
