"""What the matchmaker reads: the bots it may seat, their recent games and open matches.

A fixed number of queries whatever the number of bots: one for the eligible
bots with their rating on the ladder, one count per grouping (recent seats on
the ladder, open seats anywhere).
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db.models import Count

from ladder.bots import presence
from ladder.bots.models import Bot
from ladder.common.elo import SCALE
from ladder.matches.models import Match, MatchSeat
from ladder.matchmaking.planner import Candidate
from ladder.ratings.models import BotRating

OPEN_STATES = (Match.Status.QUEUED, Match.Status.RUNNING)


def ladder_open_count(*, ladder: str) -> int:
    """Queued and running matches on the ladder (whoever made them)."""
    return Match.objects.filter(ladder=ladder, status__in=OPEN_STATES).count()


def matchmaking_candidates(*, ladder: str, recent_since: datetime) -> list[Candidate]:
    """Active bots with a playable version, as the planner sees them on ``ladder``.

    Playable: active (not suspended, not retired) with a current version (the
    newest valid one: a hosted upload that passed its smoke match, or a remote
    endpoint that checked); a connected bot only while it holds an open stream.
    ``recent_games`` counts the bot's seats in matches of this ladder created
    since ``recent_since`` (open ones included, so the planner does not serve a
    bot twice while its matches wait); ``active_matches`` its seats in open
    matches on any ladder (a bot has one set of processes, whatever the ladder).
    """
    rows = list(
        Bot.objects.filter(
            is_active=True, retired_at__isnull=True, current_version__isnull=False
        ).values_list("pk", "owner_id", "kind")
    )
    # A connected bot is offered only while one of its streams is open (presence).
    connected = presence.connected_bot_ids(pk for pk, _, kind in rows if kind == Bot.Kind.CONNECTED)
    bots = [
        (pk, owner) for pk, owner, kind in rows if kind != Bot.Kind.CONNECTED or pk in connected
    ]
    ids = [pk for pk, _ in bots]
    ratings = dict(
        BotRating.objects.filter(ladder=ladder, bot_id__in=ids).values_list("bot_id", "rating")
    )
    # Match ids are allocated in creation order: the recent matches are those after the
    # newest older one, found walking the primary key down from the newest match (the
    # recent rows only), then read through the (bot, match) index of the seats.
    boundary = (
        Match.objects.filter(created_at__lt=recent_since)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    ) or 0
    recent = dict(
        MatchSeat.objects.filter(bot_id__in=ids, match_id__gt=boundary, match__ladder=ladder)
        .exclude(match__status=Match.Status.CANCELLED)
        .values("bot_id")
        .annotate(n=Count("id"))
        .values_list("bot_id", "n")
    )
    busy = dict(
        MatchSeat.objects.filter(bot_id__in=ids, match__status__in=OPEN_STATES)
        .values("bot_id")
        .annotate(n=Count("id"))
        .values_list("bot_id", "n")
    )
    start = settings.LADDER_ELO_START
    return [
        Candidate(
            bot_id=pk,
            owner_id=owner,
            rating=ratings.get(pk, start) / SCALE,
            recent_games=recent.get(pk, 0),
            active_matches=busy.get(pk, 0),
        )
        for pk, owner in bots
    ]
