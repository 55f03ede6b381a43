"""The ladder's own events in words: what the bots app and the Play stream tell authors.

Each function is called inside the transaction of what happened and names the
event by a key that makes it once: a suspension by the bot and the moment it
was suspended (a bot lifted and suspended again is a new event), a smoke match
by its version, a refused connection by the bot, the reason and the hour (a bot
that reconnects every few seconds is told once per
``LADDER_NOTIFY_REFUSED_QUIET_S``, not every time), a competition's phase by the
competition and the phase, its result by the competition. Plain values in, so
this module needs nothing of the apps that call it (the competitions app sits
above this one and calls in).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from django.conf import settings

from ladder.accounts.models import User
from ladder.notifications.kinds import Kind
from ladder.notifications.links import site_link
from ladder.notifications.models import Delivery
from ladder.notifications.services import notify


def bot_suspended(
    *,
    owner: User,
    bot_id: int,
    bot_name: str,
    reason: str,
    suspended_at: datetime,
    by_staff: bool,
    match_id: int | None = None,
) -> list[Delivery]:
    """A bot was suspended: by the ladder (its failing match's logs linked) or by staff."""
    if match_id is not None:
        link = site_link("web:match", match_id, fragment="seat-logs")
        where = f"The match that crossed the line, with your bot's log: {link}"
    else:
        link = site_link("web:bot-manage", bot_id)
        where = f"Your bot's page: {link}"
    if by_staff:
        lift = "Staff suspended it; only staff can lift it."
    else:
        lift = (
            "It plays again once you upload a new version, or when you lift the suspension "
            "on its page (do that after fixing what made it fail)."
        )
    body = (
        f"Your bot {bot_name} no longer plays on the ladder.\n\nWhy: {reason}\n\n{lift}\n\n{where}"
    )
    return notify(
        user=owner,
        kind=Kind.BOT_SUSPENDED,
        key=f"bot:{bot_id}:suspended:{suspended_at.isoformat()}",
        subject=f"Your bot {bot_name} was suspended",
        body=body,
        link=link,
        data={
            "bot": bot_id,
            "bot_name": bot_name,
            "reason": reason,
            "by": "staff" if by_staff else "ladder",
            "match": match_id,
        },
    )


def smoke_judged(
    *,
    owner: User,
    bot_id: int,
    bot_name: str,
    version_id: int,
    number: int,
    passed: bool,
    outcome: str,
) -> list[Delivery]:
    """A hosted version's smoke match was recorded: passed (it plays now) or failed."""
    link = site_link("web:bot-manage", bot_id)
    if passed:
        subject = f"{bot_name} v{number} passed its smoke match"
        body = f"Version {number} of {bot_name} passed its smoke match and plays from now on.\n\n"
    else:
        subject = f"{bot_name} v{number} failed its smoke match"
        body = (
            f"Version {number} of {bot_name} failed its smoke match and will not play; "
            "your bot keeps playing its last valid version.\n\n"
        )
    body += f"Outcome: {outcome}\n\nThe smoke match's log is on your bot's page: {link}"
    return notify(
        user=owner,
        kind=Kind.SMOKE_PASSED if passed else Kind.SMOKE_FAILED,
        key=f"version:{version_id}",
        subject=subject,
        body=body,
        link=link,
        data={
            "bot": bot_id,
            "bot_name": bot_name,
            "version": version_id,
            "number": number,
            "outcome": outcome,
        },
    )


def connected_refused(
    *, owner: User, bot_id: int, bot_name: str, code: str, why: str, now: float | None = None
) -> list[Delivery]:
    """A connected bot's stream was refused (suspended, too many streams, ...)."""
    quiet = max(1, settings.LADDER_NOTIFY_REFUSED_QUIET_S)
    window = int((time.time() if now is None else now) // quiet)
    link = site_link("web:bot-manage", bot_id)
    return notify(
        user=owner,
        kind=Kind.CONNECTED_REFUSED,
        key=f"bot:{bot_id}:refused:{code}:{window}",
        subject=f"Your connected bot {bot_name} was refused",
        body=(
            f"The ladder refused a connection of your bot {bot_name}: {why} ({code}).\n\n"
            "It does not play until it connects. Further refusals for the same reason are "
            f"not told again within {quiet // 60} minutes.\n\nYour bot's page: {link}"
        ),
        link=link,
        data={"bot": bot_id, "bot_name": bot_name, "code": code, "reason": why},
    )


# --- competitions (told by ladder.competitions.events, in the transaction that moved them) ---


@dataclass(frozen=True)
class EntryPlace:
    """One of the owner's entries in a competition's words: its bot and, once the final
    is over, its place with the place's interval (None: it did not play the final)."""

    bot_name: str
    place: int | None = None
    low: int | None = None
    high: int | None = None
    finalist: bool = True


_FOLLOWING = "You follow this competition (stop following it on its page)."


def _when(at: datetime | None) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "(no date)"


def _names(entries: Sequence[EntryPlace]) -> str:
    names = [e.bot_name for e in entries]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def competition_phase_changed(
    *,
    owner: User,
    competition_id: int,
    name: str,
    phase: str,
    changed_at: datetime | None,
    freeze_at: datetime | None,
    final_starts_at: datetime | None,
    entries: Sequence[EntryPlace],
) -> list[Delivery]:
    """A competition the owner has bots in (or follows: no ``entries``) moved to ``phase``
    (entry, frozen, final).

    The end (``finished``) is told by ``competition_result``, with the places.
    """
    link = site_link("web:competition", competition_id)
    # An owner is told their entry; a follower (no entry) why they are told.
    yours = f"Your entry: {_names(entries)}." if entries else _FOLLOWING
    if phase == "entry":
        subject = f"{name}: entry is open"
        body = f"Entry to {name} opened at {_when(changed_at)}. "
        body += yours if entries else f"Enter a bot on its page. {_FOLLOWING}"
        body += (
            f"\n\nSubmissions freeze at {_when(freeze_at)}; the final starts at "
            f"{_when(final_starts_at)}."
        )
    elif phase == "frozen":
        out = [e.bot_name for e in entries if not e.finalist]
        subject = f"{name}: submissions are frozen"
        body = (
            f"Submissions to {name} froze at {_when(changed_at)}. The final plays each bot's "
            "version as it was at the freeze; versions uploaded later play on the ladder, "
            f"not in the final.\n\n{yours}"
        )
        if out:
            body += f" Not in the final (qualification or no playable version): {', '.join(out)}."
        body += f"\n\nThe final starts at {_when(final_starts_at)}."
    elif phase == "final":
        subject = f"{name}: the final has started"
        body = (
            f"The final of {name} started at {_when(changed_at)}. {yours}\n\n"
            "It plays until the order of the top places is settled or its game cap is "
            "reached; the bracket or standings are live on the competition's page."
        )
    else:
        raise ValueError(f"phase {phase!r} is told by competition_result")
    body += f"\n\nThe competition's page: {link}"
    return notify(
        user=owner,
        kind=Kind.COMPETITION_PHASE,
        key=f"competition:{competition_id}:phase:{phase}",
        subject=subject,
        body=body,
        link=link,
        data={
            "competition": competition_id,
            "competition_name": name,
            "phase": phase,
            "at": changed_at.isoformat() if changed_at else None,
            "final_starts_at": final_starts_at.isoformat() if final_starts_at else None,
            "bots": [e.bot_name for e in entries],
        },
    )


def competition_result(
    *,
    owner: User,
    competition_id: int,
    name: str,
    winner: str | None,
    finalists: int,
    games: int,
    confidence: float,
    note: str,
    entries: Sequence[EntryPlace],
) -> list[Delivery]:
    """A competition the owner has bots in has its final result: their places and the
    winner (a follower, no ``entries``: the winner)."""
    link = site_link("web:competition", competition_id)
    placed = sorted((e for e in entries if e.place is not None), key=lambda e: e.place or 0)
    if placed:
        best = placed[0]
        subject = f"{name}: {best.bot_name} placed {_ordinal(best.place or 0)} of {finalists}"
    else:
        subject = f"{name}: the final's result"
    if winner:
        body = f"The final of {name} is over after {games} games. The winner: {winner}.\n\n"
    else:
        body = f"{name} finished without a final result" + (f": {note}" if note else "") + ".\n\n"
    lines = []
    for e in entries:
        if e.place is None:
            lines.append(f"- {e.bot_name}: did not play the final")
            continue
        line = f"- {e.bot_name}: {_ordinal(e.place)} of {finalists}"
        if e.low is not None and e.high is not None and e.low != e.high:
            line += (
                f" (somewhere from {_ordinal(e.low)} to {_ordinal(e.high)} "
                f"at {confidence:.0%} confidence)"
            )
        elif e.low is not None:
            line += f" (settled at {confidence:.0%} confidence)"
        lines.append(line)
    body += ("Your entry:\n" + "\n".join(lines)) if lines else _FOLLOWING
    body += f"\n\nThe result, the bracket and the pairwise table: {link}"
    return notify(
        user=owner,
        kind=Kind.COMPETITION_RESULT,
        key=f"competition:{competition_id}:result",
        subject=subject,
        body=body,
        link=link,
        data={
            "competition": competition_id,
            "competition_name": name,
            "winner": winner,
            "games": games,
            "places": [
                {"bot": e.bot_name, "place": e.place, "low": e.low, "high": e.high} for e in entries
            ],
        },
    )
