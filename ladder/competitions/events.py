"""Where a competition's news leaves this app: each entrant's owner is told.

``phase_changed`` and ``final_finished`` are called by the services inside the
transaction that made the event (the phase moved by a conditional UPDATE, the
final's result written under the competition's lock), not after it commits. That
is what makes the telling exactly once: ``ladder.notifications.services.notify``
writes what is owed in the caller's transaction, keyed by the event
(``competition:<id>:phase:<phase>``, ``competition:<id>:result``), so

- only the one tick that moved the phase tells it, and a second tick, another
  scheduler or a task delivered again finds the phase moved and tells nothing
  (and were it told again, the key would make it a no-op);
- a move that rolls back owes nothing;
- a process that dies right after the commit has already written what is owed
  (the notifications sweep sends it). Called from ``transaction.on_commit``
  instead, a crash between the commit and the callback would lose the message
  for good: the phase has moved, and no tick moves it again.

Each owner is told in a savepoint of its own, and a failure there is logged,
not raised: a bug in the telling never rolls back the competition's move (nor
stops the other owners' messages). Who is told: the entrants' owners (an owner
with several entries gets one message naming them all) and the competition's
followers (``following``: users with no entry, told the same news without one);
a user who is both is told once, as an owner. Each then gets it by the channels
they chose for its kind, with the kind's unsubscribe link.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import transaction

from ladder.accounts.models import User
from ladder.competitions.models import Competition, CompetitionEntry, CompetitionFollower
from ladder.notifications import events as told
from ladder.notifications.events import EntryPlace

log = logging.getLogger("ladder.competitions.events")

# The phases told by phase_changed; the end is told by final_finished (with the places).
TOLD_PHASES = ("entry", "frozen", "final")


def _told(competition: Competition) -> dict[int, tuple[User, list[EntryPlace]]]:
    """Everyone told of ``competition``'s news, by user id: each entrant's owner with their
    entries, then each follower who owns none (with none)."""
    owners: dict[int, tuple[User, list[EntryPlace]]] = {}
    entries = (
        CompetitionEntry.objects.filter(competition=competition)
        .select_related("bot", "owner")
        .order_by("owner_id", "place", "seed", "pk")
    )
    for entry in entries:
        _, lines = owners.setdefault(entry.owner_id, (entry.owner, []))
        lines.append(
            EntryPlace(
                bot_name=entry.bot.name,
                place=entry.place,
                low=entry.place_low,
                high=entry.place_high,
                finalist=entry.finalist,
            )
        )
    followers = CompetitionFollower.objects.filter(competition=competition).select_related("user")
    for follower in followers.order_by("user_id"):
        owners.setdefault(follower.user_id, (follower.user, []))
    return owners


def _tell_each(competition: Competition, what: str, tell: Callable[..., object]) -> int:
    """Call ``tell(owner=..., entries=...)`` for each user told, each in its own savepoint."""
    told_ = 0
    for user_id, (owner, entries) in _told(competition).items():
        try:
            with transaction.atomic():
                tell(owner=owner, entries=entries)
            told_ += 1
        except Exception:  # the competition moves on whatever the telling does
            log.exception(
                "competition %s: telling user %s of %s failed", competition.pk, user_id, what
            )
    return told_


def phase_changed(competition: Competition, phase: str) -> None:
    """``competition`` moved to ``phase`` (entry, frozen, final): tell each entrant's owner
    and each follower.

    ``finished`` is told by ``final_finished``, with the places, not here.
    """
    log.info("competition %s (%s): phase %s", competition.pk, competition.name, phase)
    if phase not in TOLD_PHASES:
        return

    def tell(*, owner: User, entries: list[EntryPlace]) -> object:
        return told.competition_phase_changed(
            owner=owner,
            competition_id=competition.pk,
            name=competition.name,
            phase=phase,
            changed_at=competition.phase_changed_at,
            freeze_at=competition.freeze_at,
            final_starts_at=competition.final_starts_at,
            entries=entries,
        )

    n = _tell_each(competition, f"phase {phase}", tell)
    log.info("competition %s: phase %s told to %d owners", competition.pk, phase, n)


def final_finished(competition: Competition) -> None:
    """``competition``'s final has its result (``competition.result``; entries' places):
    tell each entrant's owner their places and the winner (a follower: the winner)."""
    log.info("competition %s (%s): final finished", competition.pk, competition.name)
    result = competition.result or {}
    places = result.get("places") or []
    winner = None
    if places:
        bot_id = places[0].get("bot")
        entry = competition.entries.filter(bot_id=bot_id).select_related("bot", "owner").first()
        if entry is not None:
            winner = f"{entry.bot.name} by {entry.owner.username}"

    def tell(*, owner: User, entries: list[EntryPlace]) -> object:
        return told.competition_result(
            owner=owner,
            competition_id=competition.pk,
            name=competition.name,
            winner=winner,
            finalists=len(places),
            games=int(result.get("games") or competition.games or 0),
            confidence=competition.confidence,
            note=str(result.get("note") or ""),
            entries=entries,
        )

    n = _tell_each(competition, "the result", tell)
    log.info("competition %s: result told to %d owners", competition.pk, n)
