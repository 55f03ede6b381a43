"""Auto-suspend: after a match is recorded, take its failing bots off the ladder.

``match_finish`` (``ladder.finishing.services``) calls ``bots_suspend_failing``
once the result is committed (a service call, not a signal). Only the bots that forfeited or
faulted in that match are looked at, so a clean match costs no query. For each,
the pure ``ladder.finishing.suspension_rules.suspension_reason`` decides over its
last finished seats (recorded after its last lift, so a lifted bot starts with
a clean slate) with the thresholds of ``LADDER_SUSPEND_*``; a bot over them is
suspended (``bot_auto_suspend``, the reason is what its owner sees, and is
told: ``ladder.notifications``, with this match's logs linked) and its
queued ladder matches are cancelled, so spectators do not watch it forfeit them.
Tournament and version-comparison matches are left to play: their standings
and statistics count forfeits.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from django.conf import settings
from django.db.models import Q

from ladder.bots.models import Bot
from ladder.bots.services import bot_auto_suspend
from ladder.common.exceptions import Conflict
from ladder.finishing.suspension_rules import SeatRecord, SuspendPolicy, suspension_reason
from ladder.matches.claims import match_cancel
from ladder.matches.models import Match, MatchSeat

log = logging.getLogger("ladder.finishing")


def suspend_policy() -> SuspendPolicy | None:
    """The thresholds from the settings; None when auto-suspend is off (window 0)."""
    if settings.LADDER_SUSPEND_WINDOW <= 0:
        return None
    return SuspendPolicy(
        window=settings.LADDER_SUSPEND_WINDOW,
        max_forfeits=settings.LADDER_SUSPEND_FORFEITS,
        consecutive_forfeits=settings.LADDER_SUSPEND_CONSECUTIVE,
        max_faults=settings.LADDER_SUSPEND_FAULTS,
    )


def bot_recent_seats(*, bot: Bot, window: int) -> list[SeatRecord]:
    """The bot's last ``window`` recorded seats, newest first, since its last lift."""
    seats = MatchSeat.objects.filter(bot_id=bot.pk, result__isnull=False)
    if bot.failures_since is not None:
        seats = seats.filter(result__recorded_at__gt=bot.failures_since)
    rows = seats.order_by("-result_id").values_list("ended", "faults", "forfeit_reason")[:window]
    return [
        SeatRecord(forfeited=ended == MatchSeat.Ended.FORFEITED, faults=faults, reason=reason)
        for ended, faults, reason in rows
    ]


def bots_suspend_failing(*, match_id: int) -> list[int]:
    """Suspend the bots of a recorded match whose recent matches cross the thresholds.

    Returns the ids of the bots this call suspended. Idempotent: an already
    suspended bot is left alone.
    """
    policy = suspend_policy()
    if policy is None:
        return []
    failing = list(
        MatchSeat.objects.filter(match_id=match_id, result__isnull=False, bot__is_active=True)
        .filter(Q(ended=MatchSeat.Ended.FORFEITED) | Q(faults__gt=0))
        .values_list("bot_id", flat=True)
    )
    if not failing:
        return []
    suspended: list[int] = []
    for bot in Bot.objects.filter(pk__in=failing, is_active=True):
        reason = suspension_reason(bot_recent_seats(bot=bot, window=policy.window), policy)
        if reason and bot_auto_suspend(bot_id=bot.pk, reason=reason, match_id=match_id):
            suspended.append(bot.pk)
            _cancel_queued(bot_ids=[bot.pk], why=f"bot {bot.name} was suspended: {reason}")
    return suspended


def _cancel_queued(*, bot_ids: Sequence[int], why: str) -> None:
    """Cancel the queued (not yet started) non-tournament matches that seat these bots."""
    queued = (
        Match.objects.filter(
            status=Match.Status.QUEUED, tournament__isnull=True, seats__bot_id__in=bot_ids
        )
        .exclude(deal__comparison__isnull=False)
        .values_list("pk", flat=True)
    )
    for match_id in list(queued):
        try:
            match_cancel(match_id=match_id, user=None, reason=why)
        except Conflict:  # started meanwhile: it plays (and the bot forfeits) as usual
            continue
        log.info("match %s cancelled: %s", match_id, why)
