"""Competitions: create, invite, enter, move phases at their times, play the final.

Phases (``Competition.Phase``) move forward only, each by one conditional UPDATE
guarded by the phase it leaves (``_move``): however many beat schedulers or
workers run ``competitions_tick`` at once, exactly one of them moves a phase and
does what the move does (lock the versions at the freeze, seed and start the
final) and tells ``events`` (the entrants' owners), all in the same transaction.

The final is driven by the pure ``ladder.competitions.final.final_step``:
``final_advance`` locks the competition's row, records the deals whose matches
are all closed (pair shares from their ranks), and only when none is open asks
the pure function what to play next (duplicate deals, each seat pinned to the
version the freeze locked) or writes the result. Its matches are unrated and
played before ladder matches (``PUBLIC_PRIORITY``; private tournaments at
``PRIVATE_PRIORITY``, between the two).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from dataclasses import asdict
from datetime import datetime
from functools import partial
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from ladder.accounts.models import User
from ladder.bots.models import Bot
from ladder.common.exceptions import ApplicationError, Conflict, NotFound, PermissionDenied
from ladder.competitions import events
from ladder.competitions.final import FinalConfig, Format, final_step, games_of
from ladder.competitions.models import (
    Competition,
    CompetitionEntry,
    CompetitionInvitation,
    FinalDeal,
)
from ladder.competitions.settle import DealRecord, pair_shares
from ladder.ladders import ladder_default
from ladder.matches.creation import OPEN_STATES, match_ladder
from ladder.matches.models import Match, MatchSeat
from ladder.matches.spec import MatchSpec
from ladder.quotas import catalogue
from ladder.quotas.take import quota_take
from ladder.ratings.models import BotRating
from ladder.tournaments.services import deal_create

log = logging.getLogger("ladder.competitions")

# Match.priority: public events (competitions, staff tournaments) are played first,
# then private tournaments, then the ladder (ladder.matches.queue).
PUBLIC_PRIORITY = 2
PRIVATE_PRIORITY = 1

Phase = Competition.Phase


def config_of(competition: Competition) -> FinalConfig:
    """The pure final's configuration from the competition's fields."""
    return FinalConfig(
        format=Format(competition.format),
        seats=competition.seats,
        confidence=competition.confidence,
        min_deals=competition.min_deals,
        max_games=competition.max_games,
        matchup_max_deals=competition.matchup_max_deals,
        group_max_deals=competition.group_max_deals,
        top=competition.top,
        advance=competition.advance,
        first=Format(competition.first_stage),
        finalists=competition.finalists,
        resamples=settings.LADDER_COMPETITION_RESAMPLES,
        seed=competition.pk or 0,
    )


def competition_check(competition: Competition) -> None:
    """ApplicationError (400) naming what cannot be played."""
    if not competition.name.strip():
        raise ApplicationError("a competition needs a name")
    if competition.format not in Format.__members__.values():
        raise ApplicationError(f"format must be one of {', '.join(f.value for f in Format)}")
    if not competition.entry_opens_at <= competition.freeze_at <= competition.final_starts_at:
        raise ApplicationError("entry opens, then submissions freeze, then the final starts")
    if not 1 <= competition.entries_per_user <= 20:
        raise ApplicationError("entries_per_user must be 1 to 20")
    if not 2 <= competition.final_size <= 256:
        raise ApplicationError("final_size must be 2 to 256")
    if competition.max_games > settings.LADDER_COMPETITION_MAX_GAMES:
        raise ApplicationError(f"max_games is at most {settings.LADDER_COMPETITION_MAX_GAMES}")
    try:
        config_of(competition).check(max(competition.final_size, competition.seats))
    except ValueError as exc:
        raise ApplicationError(str(exc)) from exc
    if competition.format == Format.ROUND_ROBIN and competition.seats > 2:
        tables = len(list(itertools.combinations(range(competition.final_size), competition.seats)))
        if tables * competition.min_deals * competition.seats > competition.max_games:
            raise ApplicationError(
                f"a {competition.seats}-seat round robin of {competition.final_size} needs more"
                f" than max_games ({competition.max_games}) for its first deals"
            )
    seats = (
        {competition.seats, 2} if competition.first_stage == Format.SWISS else {competition.seats}
    )
    for n in seats:
        match_ladder(seats=n, ladder=competition.ladder or None, rated=False)


def competition_create(*, user: User, **fields: Any) -> Competition:
    """A staff member announces a competition (``Competition``'s fields). It opens for entry,
    freezes and starts its final at its times (``competitions_tick``)."""
    if not user.is_staff:
        raise PermissionDenied("only staff create competitions")
    fields["name"] = str(fields.get("name", "")).strip()
    competition = Competition(created_by=user, phase=Phase.ANNOUNCED, **fields)
    competition_check(competition)
    with transaction.atomic():
        if Competition.objects.filter(name=competition.name).exists():
            raise Conflict(f"a competition named {competition.name!r} exists")
        try:
            competition.save()
        except IntegrityError as exc:
            raise Conflict(f"a competition named {competition.name!r} exists") from exc
    log.info(
        "competition %s created: %s (%s)", competition.pk, competition.name, competition.format
    )
    competitions_tick()  # an entry window that is already open opens now
    competition.refresh_from_db()
    return competition


def _get(competition_id: int, *, lock: bool = False) -> Competition:
    qs = Competition.objects.select_for_update() if lock else Competition.objects
    competition = qs.filter(pk=competition_id).first()
    if competition is None:
        raise NotFound("no such competition")
    return competition


def competition_invite(*, user: User, competition_id: int, username: str) -> CompetitionInvitation:
    """Staff invite a user to an invitation-only competition (idempotent)."""
    if not user.is_staff:
        raise PermissionDenied("only staff invite to a competition")
    competition = _get(competition_id)
    if competition.private:
        raise ApplicationError("invite bots to a private tournament (private_invite)")
    invitee = User.objects.filter(username=username).first()
    if invitee is None:
        raise NotFound(f"no user {username[:40]!r}")
    invitation, _ = CompetitionInvitation.objects.get_or_create(
        competition=competition, user=invitee, bot=None, defaults={"accepted_at": timezone.now()}
    )
    return invitation


def competition_enter(*, user: User, competition_id: int, bot_id: int) -> CompetitionEntry:
    """Enter one of the caller's bots while entry is open (at most ``entries_per_user``)."""
    with transaction.atomic():
        competition = _get(competition_id, lock=True)  # entries are counted under this lock
        if competition.private:
            raise ApplicationError("a private tournament's bots are invited by its creator")
        now = timezone.now()
        if competition.phase != Phase.ENTRY or now >= competition.freeze_at:
            raise Conflict(f"{competition.name} is not open for entry ({competition.phase})")
        invited = competition.invitations.filter(user=user, bot__isnull=True).exists
        by_invitation = competition.entry == Competition.Entry.INVITATION
        if by_invitation and not user.is_staff and not invited():
            raise PermissionDenied(f"{competition.name} is by invitation")
        bot = Bot.objects.filter(pk=bot_id).first()
        if bot is None:
            raise NotFound("no such bot")
        if bot.owner_id != user.pk:
            raise PermissionDenied(f"bot {bot.name} belongs to another user")
        if not bot.playable:
            raise Conflict(f"bot {bot.name} is not active")
        if competition.entries.filter(bot=bot).exists():
            raise Conflict(f"{bot.name} is already entered")
        mine = competition.entries.filter(owner=user).count()
        if mine >= competition.entries_per_user:
            raise Conflict(
                f"at most {competition.entries_per_user} entries per user in {competition.name}"
            )
        entry = CompetitionEntry.objects.create(competition=competition, bot=bot, owner=user)
    log.info("competition %s: %s entered %s", competition.pk, user.username, bot.name)
    return entry


def competition_withdraw(*, user: User, competition_id: int, bot_id: int) -> None:
    """Take an entry back while entry is open (its owner, or staff)."""
    with transaction.atomic():
        competition = _get(competition_id, lock=True)
        entry = competition.entries.filter(bot_id=bot_id).first()
        if entry is None:
            raise NotFound("no such entry")
        if entry.owner_id != user.pk and not user.is_staff:
            raise PermissionDenied("not your entry")
        if competition.phase not in (Phase.ANNOUNCED, Phase.ENTRY):
            raise Conflict("entries are locked once submissions freeze")
        entry.delete()


# --- phases ---------------------------------------------------------------------------


def _move(competition_id: int, leaving: str, to: str, now: datetime) -> bool:
    """Move one competition from ``leaving`` to ``to``: True for the one caller that did."""
    moved = Competition.objects.filter(pk=competition_id, phase=leaving).update(
        phase=to, phase_changed_at=now
    )
    return moved == 1


def _announce(competition_id: int, phase: str) -> None:
    """Tell ``events`` in the transaction that moved the phase: what is owed commits with
    the move, or not at all (``events`` says why not after the commit)."""
    competition = Competition.objects.get(pk=competition_id)
    events.phase_changed(competition, phase)
    if phase == Phase.FINISHED:
        events.final_finished(competition)


def competitions_tick(now: datetime | None = None) -> dict[str, list[int]]:
    """Move every competition whose time has come, and advance the running finals.

    What beat runs (``workers.competitions_tick``); safe to run from any number of
    schedulers at once (each move is a conditional UPDATE). Returns the ids moved
    per phase and the finals advanced.
    """
    now = now or timezone.now()
    report: dict[str, list[int]] = {"entry": [], "frozen": [], "final": [], "advanced": []}
    due = Competition.objects.filter(private=False)
    for pk in due.filter(phase=Phase.ANNOUNCED, entry_opens_at__lte=now).values_list(
        "pk", flat=True
    ):
        with transaction.atomic():
            if _move(pk, Phase.ANNOUNCED, Phase.ENTRY, now):
                report["entry"].append(pk)
                _announce(pk, Phase.ENTRY)
    for pk in due.filter(phase=Phase.ENTRY, freeze_at__lte=now).values_list("pk", flat=True):
        with transaction.atomic():
            if _move(pk, Phase.ENTRY, Phase.FROZEN, now):
                _freeze(pk)
                report["frozen"].append(pk)
                _announce(pk, Phase.FROZEN)
    for pk in due.filter(phase=Phase.FROZEN, final_starts_at__lte=now).values_list("pk", flat=True):
        with transaction.atomic():
            if _move(pk, Phase.FROZEN, Phase.FINAL, now):
                report["final"].append(pk)
                if _start_final(pk):
                    _announce(pk, Phase.FINAL)
    running = Competition.objects.filter(phase=Phase.FINAL).values_list("pk", flat=True)
    for pk in list(running):
        if final_advance(competition_id=pk):
            report["advanced"].append(pk)
    moved = {k: v for k, v in report.items() if v}
    if moved:
        log.info("competitions tick: %s", moved)
    return report


def _freeze(competition_id: int) -> None:
    """Lock each entry's current version for the final and seed the entries by their
    qualification: the ladder's conservative rating (its leaderboard's order) now."""
    competition = Competition.objects.get(pk=competition_id)
    key = competition.ladder or ladder_default().key
    entries = list(competition.entries.select_related("bot"))
    scores = dict(
        BotRating.objects.filter(ladder=key, bot_id__in=[e.bot_id for e in entries]).values_list(
            "bot_id", "score"
        )
    )
    for entry in entries:
        bot = entry.bot
        entry.version_id = bot.current_version_id if bot.playable else None
        entry.qualification_score = scores.get(bot.pk)
    ordered = sorted(
        entries,
        key=lambda e: (
            e.version_id is None,
            -(e.qualification_score or -(10**9)),
            e.entered_at,
            e.pk,
        ),
    )
    for seed, entry in enumerate(ordered, start=1):
        entry.seed = seed
        entry.finalist = entry.version_id is not None and seed <= competition.final_size
    CompetitionEntry.objects.bulk_update(
        entries, ["version", "qualification_score", "seed", "finalist"]
    )
    log.info(
        "competition %s frozen: %d entries, %d finalists",
        competition_id,
        len(entries),
        sum(e.finalist for e in entries),
    )


def _finalists(competition: Competition) -> list[CompetitionEntry]:
    return list(competition.entries.filter(finalist=True).order_by("seed", "pk"))


def _start_final(competition_id: int) -> bool:
    """The final's first deals, True; or, with fewer finalists than the final needs, the
    end (told with its result), False: then no one is told that a final started."""
    competition = Competition.objects.select_for_update().get(pk=competition_id)
    if len(_finalists(competition)) < max(
        2, competition.seats if competition.format != Format.GROUPS else 2
    ):
        competition.phase = Phase.FINISHED
        competition.phase_changed_at = competition.finished_at = timezone.now()
        competition.result = {
            "places": [], "coin_tosses": [], "settled_places": 0, "pairwise": [], "games": 0,
            "capped": False, "note": "fewer finalists than the final needs",
        }  # fmt: skip
        competition.save(update_fields=["phase", "phase_changed_at", "finished_at", "result"])
        log.warning("competition %s: too few finalists, finished without a final", competition.pk)
        _announce(competition.pk, Phase.FINISHED)
        return False
    _step(competition)
    # A final whose first step already settled it (told with its result) never started.
    return competition.phase == Phase.FINAL


def final_advance(*, competition_id: int) -> bool:
    """Record the final's closed deals and, when none is open, play on or finish.

    Exactly once under concurrent calls: the competition's row is locked, each deal
    is recorded once (``FinalDeal.recorded``), and the next deals are created only
    when none is open. True when something changed.
    """
    with transaction.atomic():
        competition = Competition.objects.select_for_update().filter(pk=competition_id).first()
        if competition is None or competition.phase != Phase.FINAL:
            return False
        recorded = _record_closed(competition)
        if competition.deals.filter(recorded=False).exists():
            if recorded:
                competition.save(update_fields=["games", "deals_open"])
            return recorded > 0
        _step(competition)
        return True


def _record_closed(competition: Competition) -> int:
    """Record every open deal of the final whose matches are all closed: its pair shares."""
    open_deals = list(competition.deals.filter(recorded=False).select_related("deal"))
    if not open_deals:
        return 0
    deal_ids = [d.deal_id for d in open_deals if d.deal_id is not None]
    seats = (
        MatchSeat.objects.filter(match__deal_id__in=deal_ids)
        .order_by("match__deal_id", "match__deal_rotation", "seat")
        .values_list("match__deal_id", "match_id", "match__status", "bot_id", "rank")
    )
    by_deal: dict[int, dict[int, list[tuple[str, int, int | None]]]] = {}
    for deal_id, match_id, status, bot, rank in seats:
        by_deal.setdefault(deal_id, {}).setdefault(match_id, []).append((status, bot, rank))
    done = 0
    for fd in open_deals:
        matches = by_deal.get(fd.deal_id or 0, {})
        if len(matches) < len(fd.table) or any(
            s in OPEN_STATES for seats_ in matches.values() for s, _, _ in seats_
        ):
            continue
        if any(s != Match.Status.FINISHED for seats_ in matches.values() for s, _, _ in seats_):
            fd.pairs = None
        else:
            table = [int(b) for b in fd.table]
            rotations = []
            for seats_ in matches.values():
                ranks = {bot: rank or 0 for _, bot, rank in seats_}
                rotations.append([ranks[b] for b in table])
            fd.pairs = {f"{a}-{b}": s for (a, b), s in pair_shares(table, rotations).items()}
        fd.recorded = True
        fd.save(update_fields=["pairs", "recorded"])
        competition.games += len(fd.table)
        competition.deals_open = max(0, competition.deals_open - 1)
        done += 1
    return done


def _records(competition: Competition) -> list[DealRecord]:
    out = []
    for key, table, pairs in (
        competition.deals.filter(recorded=True).order_by("pk").values_list("key", "table", "pairs")
    ):
        parsed = None
        if pairs is not None:
            parsed = {tuple(int(x) for x in k.split("-")): v for k, v in pairs.items()}
        out.append(DealRecord(key, tuple(int(b) for b in table), parsed))  # type: ignore[arg-type]
    return out


def _step(competition: Competition) -> None:
    """Ask the pure final what to do (under the competition's lock) and do it."""
    finalists = _finalists(competition)
    seeds = [e.bot_id for e in finalists]
    versions = {e.bot_id: e.version_id for e in finalists if e.version_id is not None}
    records = _records(competition)
    step = final_step(config_of(competition), seeds, records)
    competition.final_view = step.view
    competition.games = games_of(records)
    if step.result is None:
        priority = PRIVATE_PRIORITY if competition.private else PUBLIC_PRIORITY
        created = 0
        for request in step.play:
            for _ in range(request.deals):
                _deal(competition, request.key, request.table, versions, priority)
                created += 1
        competition.deals_open = competition.deals.filter(recorded=False).count()
        competition.save(update_fields=["final_view", "games", "deals_open"])
        log.info("competition %s: %d final deals queued", competition.pk, created)
        return
    result = step.result
    by_bot = {p.bot: p for p in result.places}
    for entry in competition.entries.all():
        place = by_bot.get(entry.bot_id)
        entry.place = place.place if place else None
        entry.place_low = place.low if place else None
        entry.place_high = place.high if place else None
        entry.score = place.score if place else None
        entry.save(update_fields=["place", "place_low", "place_high", "score"])
    competition.result = asdict(result)
    competition.phase = Phase.FINISHED
    competition.phase_changed_at = competition.finished_at = timezone.now()
    competition.deals_open = 0
    competition.save(
        update_fields=[
            "final_view",
            "games",
            "result",
            "phase",
            "phase_changed_at",
            "finished_at",
            "deals_open",
        ]
    )
    log.info(
        "competition %s finished: %d games, winner %s, %d places settled",
        competition.pk,
        result.games,
        result.places[0].bot if result.places else None,
        result.settled_places,
    )
    _announce(competition.pk, Phase.FINISHED)


def _deal(
    competition: Competition,
    key: str,
    table: Sequence[int],
    versions: dict[int, int],
    priority: int,
) -> None:
    """One duplicate deal of the final, each seat pinned to its frozen version. A bot that
    can no longer play (suspended, retired) forfeits the deal: recorded at once, last."""
    spec = MatchSpec(
        bot_ids=list(table),
        rated=False,
        ladder=competition.ladder or None,
        versions={b: versions[b] for b in table if b in versions},
        priority=priority,
    )
    try:
        with transaction.atomic():
            deal = deal_create(spec)
    except (Conflict, NotFound) as exc:
        playable = set(
            Bot.objects.filter(pk__in=table, is_active=True, retired_at__isnull=True).values_list(
                "pk", flat=True
            )
        )
        ranks = [1 if b in playable else 2 for b in table]
        pairs = pair_shares(list(table), [ranks])
        log.warning("competition %s: deal %s forfeited (%s)", competition.pk, key, exc)
        FinalDeal.objects.create(
            competition=competition,
            key=key,
            table=list(table),
            deal=None,
            recorded=True,
            pairs={f"{a}-{b}": s for (a, b), s in pairs.items()},
        )
        return
    FinalDeal.objects.create(competition=competition, key=key, table=list(table), deal=deal)


# --- private tournaments ----------------------------------------------------------------


def _private_tournaments_made(user: User, since: datetime) -> dict[catalogue.Quota, int]:
    """A user's private tournaments made since ``since`` (one queues many matches above
    the ladder's priority: a string of them would take the workers from everyone)."""
    made = Competition.objects.filter(private=True, created_by=user, created_at__gte=since)
    return {catalogue.PRIVATE_TOURNAMENTS_PER_DAY: made.count()}


def private_tournament_create(
    *, user: User, name: str, bot_ids: Sequence[int], format: str, **fields: Any
) -> Competition:
    """A user's private tournament among their own ``bot_ids`` (more by invitation,
    ``private_invite``); started by ``private_tournament_start``. Quota per day."""
    now = timezone.now()
    bots = list(Bot.objects.filter(pk__in=bot_ids))
    if len(bots) != len(set(bot_ids)):
        raise NotFound("no such bot")
    for bot in bots:
        if bot.owner_id != user.pk:
            raise PermissionDenied(f"bot {bot.name} belongs to another user (invite it)")
    competition = Competition(
        name=name.strip(),
        private=True,
        entry=Competition.Entry.INVITATION,
        entry_opens_at=now,
        freeze_at=now,
        final_starts_at=now,
        final_size=max(2, min(256, int(fields.pop("final_size", 64)))),
        format=format,
        created_by=user,
        phase=Phase.ENTRY,
        phase_changed_at=now,
        **fields,
    )
    competition_check(competition)
    with transaction.atomic():
        quota_take(user, partial(_private_tournaments_made, user))
        if Competition.objects.filter(name=competition.name).exists():
            raise Conflict(f"a competition named {competition.name!r} exists")
        competition.save()
        for bot in bots:
            CompetitionEntry.objects.create(competition=competition, bot=bot, owner=user)
    log.info("private tournament %s by %s: %d bots", competition.pk, user.username, len(bots))
    return competition


def _own_private(user: User, competition_id: int, *, lock: bool = False) -> Competition:
    competition = _get(competition_id, lock=lock)
    if not competition.private:
        raise ApplicationError("not a private tournament")
    if competition.created_by_id != user.pk and not user.is_staff:
        raise PermissionDenied("only its creator manages a private tournament")
    return competition


def private_invite(*, user: User, competition_id: int, bot_id: int) -> CompetitionInvitation:
    """Invite another user's bot into one's private tournament (its owner accepts)."""
    competition = _own_private(user, competition_id)
    if competition.phase != Phase.ENTRY:
        raise Conflict("the tournament has started")
    bot = Bot.objects.filter(pk=bot_id).first()
    if bot is None:
        raise NotFound("no such bot")
    invitation, _ = CompetitionInvitation.objects.get_or_create(
        competition=competition, bot=bot, defaults={"user_id": bot.owner_id}
    )
    return invitation


def private_invitation_accept(*, user: User, invitation_id: int) -> CompetitionEntry:
    """The invited bot's owner accepts: the bot is entered."""
    with transaction.atomic():
        invitation = (
            CompetitionInvitation.objects.select_for_update()
            .filter(pk=invitation_id, bot__isnull=False)
            .select_related("competition", "bot")
            .first()
        )
        if invitation is None or invitation.user_id != user.pk:
            raise NotFound("no such invitation")
        if invitation.competition.phase != Phase.ENTRY:
            raise Conflict("the tournament has started")
        invitation.accepted_at = invitation.accepted_at or timezone.now()
        invitation.save(update_fields=["accepted_at"])
        entry, _ = CompetitionEntry.objects.get_or_create(
            competition=invitation.competition,
            bot=invitation.bot,
            defaults={"owner": user},
        )
    return entry


def private_tournament_start(*, user: User, competition_id: int) -> Competition:
    """The creator starts the final: freeze the versions now and queue the first deals."""
    competition = _own_private(user, competition_id)
    now = timezone.now()
    with transaction.atomic():
        if _move(competition.pk, Phase.ENTRY, Phase.FROZEN, now):
            Competition.objects.filter(pk=competition.pk).update(freeze_at=now, final_starts_at=now)
            _freeze(competition.pk)
            if _move(competition.pk, Phase.FROZEN, Phase.FINAL, now) and _start_final(
                competition.pk
            ):
                _announce(competition.pk, Phase.FINAL)
    competition.refresh_from_db()
    return competition
