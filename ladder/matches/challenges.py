"""A user's challenge: the bots they name, or their bot and opponents the ladder picks.

One service for both interfaces: the REST API (``POST /api/matches/``, bots by id)
and gRPC ``RequestChallenge`` (bots by name) call ``challenge_create`` with the same
rules, so either can leave the opponents to the ladder. Picked opponents are the
playable bots nearest in rating on the match's ladder (``opponents_near``); a
connected bot counts only while it holds an open Play stream. The match itself is
``match_create``'s (ownership, quotas, versions, the queue).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings

from ladder.accounts.models import User
from ladder.bots import presence
from ladder.bots.models import Bot
from ladder.bots.selectors import with_rating
from ladder.common.exceptions import ApplicationError, Conflict, NotFound, PermissionDenied
from ladder.ladders import Ladder, ladder_get
from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.matches.spec import MatchSpec
from ladder.ratings.models import BotRating

MIN_SEATS, MAX_SEATS = 2, 4


def challenge_seats(*, named: int, seats: int | None) -> int:
    """The number of seats of a challenge naming ``named`` bots (the challenger first).

    One bot named: ``seats`` (default 2), the others picked by the ladder. More:
    exactly those bots (``seats``, if given, must agree). Checked before any bot is
    looked up, so a request naming many bots costs nothing.
    """
    if named < 1:
        raise ApplicationError("name the challenging bot")
    if named > MAX_SEATS:
        raise ApplicationError(f"at most {MAX_SEATS - 1} opponents")
    count = seats or (named if named > 1 else MIN_SEATS)
    if not MIN_SEATS <= count <= MAX_SEATS:
        raise ApplicationError(f"num_seats must be {MIN_SEATS} to {MAX_SEATS}")
    if named > 1 and count != named:
        raise ApplicationError(f"num_seats {count} does not match {named - 1} opponents")
    return count


def challenge_create(
    *,
    user: User,
    bot_ids: Sequence[int],
    seats: int | None = None,
    ladder: str | None = None,
    difficulty: str | None = None,
    rated: bool = True,
) -> Match:
    """Queue a user's challenge: ``bot_ids`` in seat order, or one bot of theirs and
    ``seats - 1`` opponents picked near its rating on ``ladder`` (None: the default)."""
    count = challenge_seats(named=len(bot_ids), seats=seats)
    ids = list(bot_ids)
    if len(ids) == 1:
        chosen = ladder_get(ladder)
        bot = with_rating(Bot.objects.filter(pk=ids[0]), ladder=chosen.key).first()
        if bot is None:
            raise NotFound(f"no such bot: {ids[0]}")
        if bot.owner_id != user.pk and not user.is_staff:
            raise PermissionDenied(f"bot {bot.name} belongs to another user")
        ids += [o.pk for o in challenge_opponents_pick(bot=bot, count=count - 1, ladder=chosen)]
    return match_create(
        MatchSpec(
            bot_ids=ids,
            requested_by=user,
            ladder=ladder or None,
            difficulty=difficulty,
            rated=rated,
        )
    )


def challenge_opponents_pick(*, bot: Bot, count: int, ladder: Ladder) -> list[Bot]:
    """``count`` bots to play ``bot`` now: the nearest in rating on ``ladder`` that can play.

    Connected bots without an open stream cannot play: looks further (four times the
    bots needed) and keeps the others; Conflict if too few remain.
    """
    opponents = playable_now(opponents_near(bot=bot, count=4 * count, ladder=ladder))[:count]
    if len(opponents) < count:
        raise Conflict(
            f"only {len(opponents)} other playable bots near {bot.name} on ladder"
            f" {ladder.key}; {count} needed"
        )
    return opponents


def playable_now(bots: list[Bot]) -> list[Bot]:
    """``bots`` without the connected ones that hold no open stream (order kept)."""
    connected = presence.connected_bot_ids(b.pk for b in bots if b.kind == Bot.Kind.CONNECTED)
    return [b for b in bots if b.kind != Bot.Kind.CONNECTED or b.pk in connected]


def opponents_near(
    *, bot: Bot, count: int, ladder: Ladder | None = None, window: int = 50
) -> list[Bot]:
    """Up to ``count`` playable bots nearest to ``bot``'s rating on ``ladder``.

    Reads at most ``window`` entries on each side of the rating (two index range
    scans), so the cost does not grow with the ladder; the matchmaker of the
    workers can do better (pairing history, fairness).
    """
    key = (ladder or ladder_get(None)).key
    rating = getattr(bot, "rating", None)
    if rating is None or getattr(bot, "rating_ladder", None) != key:
        entry = BotRating.objects.filter(bot=bot, ladder=key).values_list("rating", flat=True)
        rating = entry.first() or settings.LADDER_ELO_START
    playable = BotRating.objects.filter(
        ladder=key,
        bot__is_active=True,
        bot__retired_at__isnull=True,
        bot__current_version__isnull=False,
    ).exclude(bot=bot)
    above = playable.filter(rating__gte=rating).order_by("rating", "bot_id")[:window]
    below = playable.filter(rating__lt=rating).order_by("-rating", "-bot_id")[:window]
    near = sorted(
        [*above.values_list("bot_id", "rating"), *below.values_list("bot_id", "rating")],
        key=lambda row: (abs(row[1] - rating), row[0]),
    )[:count]
    bots = with_rating(Bot.objects.filter(pk__in=[pk for pk, _ in near]), ladder=key).in_bulk()
    return [bots[pk] for pk, _ in near]
