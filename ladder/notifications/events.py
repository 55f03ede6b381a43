"""The ladder's own events in words: what the bots app and the Play stream tell authors.

Each function is called inside the transaction of what happened and names the
event by a key that makes it once: a suspension by the bot and the moment it
was suspended (a bot lifted and suspended again is a new event), a smoke match
by its version, a refused connection by the bot, the reason and the hour (a bot
that reconnects every few seconds is told once per
``LADDER_NOTIFY_REFUSED_QUIET_S``, not every time). Plain values in, so this
module needs nothing of the apps that call it.
"""

from __future__ import annotations

import time
from datetime import datetime

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
