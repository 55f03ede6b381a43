"""Read-side queries for bots.

Bots come back with their rating on one ladder (the default unless ``ladder=``
names another) as plain attributes: ``rating`` (the mean, hundredths), ``sigma``,
``score`` (rating - k * sigma, what the board ranks by), ``games``,
``wins`` and ``rating_ladder`` (the key), read with the bot in the same query,
and with ``owner`` (and, where shown, ``current_version``) joined, so listing
N bots is one query whatever N is.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.db.models import F, FilteredRelation, OuterRef, Prefetch, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from ladder.accounts.models import User
from ladder.bots.models import Bot, BotVersion
from ladder.common import elo
from ladder.common.exceptions import Conflict, NotFound, PermissionDenied
from ladder.ladders import ladder_get
from ladder.ratings.models import BotRating


def with_rating(qs: QuerySet[Bot], *, ladder: str | None = None) -> QuerySet[Bot]:
    """Annotate ``qs`` with the bots' rating entry on ``ladder`` (start values if none)."""
    key = ladder_get(ladder).key
    return (
        qs.select_related("owner")
        .annotate(entry=FilteredRelation("ratings", condition=Q(ratings__ladder=key)))
        .annotate(
            rating=Coalesce(F("entry__rating"), Value(settings.LADDER_ELO_START)),
            # No entry yet: the start rating with the widest sigma (provisional).
            sigma=Coalesce(F("entry__sigma"), Value(elo.sigma_after(0))),
            score=Coalesce(F("entry__score"), Value(0)),
            games=Coalesce(F("entry__games"), Value(0)),
            wins=Coalesce(F("entry__wins"), Value(0)),
            rating_ladder=Value(key),
        )
    )


def ranked(qs: QuerySet[Bot], *, ladder: str | None = None) -> QuerySet[Bot]:
    """``qs`` restricted to bots with an entry on ``ladder``, annotated like ``with_rating``,
    best first (by the conservative ``score``, rating - k * sigma): one join served by the
    (ladder, score, bot) index, so a page of the leaderboard reads that page, not the
    whole ladder."""
    key = ladder_get(ladder).key
    return (
        qs.filter(ratings__ladder=key)
        .select_related("owner")
        .annotate(
            rating=F("ratings__rating"),
            sigma=F("ratings__sigma"),
            score=F("ratings__score"),
            games=F("ratings__games"),
            wins=F("ratings__wins"),
            rating_ladder=Value(key),
        )
        .order_by("-score", "id")
    )


def bot_list(
    *,
    owner: User | None = None,
    search: str = "",
    kind: str = "",
    ladder: str | None = None,
    with_current_version: bool = False,
) -> QuerySet[Bot]:
    """Bots (retired ones excluded) by name, optionally of one owner; ``current_version``
    joined on request (not for long lists that do not show it)."""
    qs = Bot.objects.filter(retired_at__isnull=True)
    if owner is not None:
        qs = qs.filter(owner=owner)
    if search:
        qs = qs.filter(name__icontains=search)
    if kind:
        qs = qs.filter(kind=kind)
    qs = with_rating(qs, ladder=ladder).order_by("name")
    return qs.select_related("current_version") if with_current_version else qs


def bot_get(*, bot_id: int, ladder: str | None = None) -> Bot:
    """One bot (retired bots stay visible for history) or NotFound."""
    qs = with_rating(Bot.objects.filter(pk=bot_id), ladder=ladder)
    bot = qs.select_related("current_version").first()
    if bot is None:
        raise NotFound("no such bot")
    return bot


def bot_get_by_name(*, name: str, ladder: str | None = None) -> Bot:
    """One bot by its (case-insensitive, unique) name or NotFound; the gRPC API uses names."""
    qs = with_rating(Bot.objects.filter(name__iexact=name.strip()), ladder=ladder)
    bot = qs.select_related("current_version").first()
    if bot is None:
        raise NotFound(f"no bot named {name.strip()[:100]!r}")
    return bot


def bot_versions(*, bot: Bot) -> QuerySet[BotVersion]:
    """A bot's versions, newest first."""
    return BotVersion.objects.filter(bot=bot).order_by("-number")


def bot_newest_versions(*, bot_ids: Sequence[int]) -> dict[int, BotVersion]:
    """Each bot's newest version whatever its status (a pending or invalid upload
    included), by bot id, in one query: what its owner last submitted."""
    newest = BotVersion.objects.filter(bot_id=OuterRef("bot_id")).order_by("-number")
    rows = BotVersion.objects.filter(
        bot_id__in=list(bot_ids), number=Subquery(newest.values("number")[:1])
    ).defer("validation_log")
    return {v.bot_id: v for v in rows}


def bot_latest_version(*, bot: Bot) -> BotVersion | None:
    """The version a new match would play: the newest VALID one (joined by the selectors
    above: no query); an invalid or still pending upload never plays."""
    return bot.current_version


def bot_version_for_owner(*, user: User, bot_id: int, number: int) -> BotVersion:
    """One version with its smoke match, for the bot's owner or staff only."""
    bot = bot_get(bot_id=bot_id)
    if not (user.is_staff or user.pk == bot.owner_id):
        raise PermissionDenied("only the bot's owner (or staff) sees its smoke match and log")
    version = bot.versions.filter(number=number).first()
    if version is None:
        raise NotFound(f"bot {bot.name} has no version {number}")
    return version


def bot_detail(*, bot_id: int, ladder: str | None = None) -> Bot:
    """``bot_get`` with ``ratings`` (its entry on every ladder, by key) fetched too."""
    entries = Prefetch("ratings", queryset=BotRating.objects.order_by("ladder"))
    qs = with_rating(Bot.objects.filter(pk=bot_id), ladder=ladder)
    bot = qs.select_related("current_version").prefetch_related(entries).first()
    if bot is None:
        raise NotFound("no such bot")
    return bot


def version_for_smoke(*, version_id: int) -> BotVersion:
    """A version that plays a smoke match, with its bot: hosted versions only (a remote
    bot's endpoint is checked when it is set, and plays no smoke match); NotFound or
    Conflict otherwise. The worker asks before playing, the recording service before
    writing: one rule."""
    version = BotVersion.objects.select_related("bot").filter(pk=version_id).first()
    if version is None:
        raise NotFound("no such version")
    if version.bot.kind != Bot.Kind.HOSTED:
        raise Conflict("only hosted versions play a smoke match")
    return version
