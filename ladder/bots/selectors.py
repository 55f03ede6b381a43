"""Read-side queries for bots."""

from __future__ import annotations

from django.db.models import QuerySet

from ladder.accounts.models import User
from ladder.bots.models import Bot, BotVersion
from ladder.common.exceptions import NotFound, PermissionDenied


def bot_list(*, owner: User | None = None, search: str = "", kind: str = "") -> QuerySet[Bot]:
    """Bots (retired ones excluded), optionally of one owner."""
    qs = Bot.objects.select_related("owner").filter(retired_at__isnull=True)
    if owner is not None:
        qs = qs.filter(owner=owner)
    if search:
        qs = qs.filter(name__icontains=search)
    if kind:
        qs = qs.filter(kind=kind)
    return qs.order_by("name")


def bot_get(*, bot_id: int) -> Bot:
    """One bot (retired bots stay visible for history) or NotFound."""
    bot = Bot.objects.select_related("owner").filter(pk=bot_id).first()
    if bot is None:
        raise NotFound("no such bot")
    return bot


def bot_versions(*, bot: Bot) -> QuerySet[BotVersion]:
    """A bot's versions, newest first."""
    return bot.versions.order_by("-number")


def bot_latest_version(*, bot: Bot) -> BotVersion | None:
    """The newest version, whatever its status (what its owner last sent)."""
    return bot.versions.order_by("-number").first()


def bot_playable_version(*, bot: Bot) -> BotVersion | None:
    """The version a new match would play: the newest VALID one (an invalid one never plays)."""
    return bot.versions.filter(status=BotVersion.Status.VALID).order_by("-number").first()


def bot_versions_pending() -> QuerySet[BotVersion]:
    """Hosted versions waiting for their smoke match, oldest first."""
    return (
        BotVersion.objects.select_related("bot")
        .filter(status=BotVersion.Status.PENDING, bot__kind=Bot.Kind.HOSTED)
        .order_by("created_at", "pk")
    )


def bot_version_for_owner(*, user: User, bot_id: int, number: int) -> BotVersion:
    """One version with its smoke match, for the bot's owner or staff only."""
    bot = bot_get(bot_id=bot_id)
    if not (user.is_staff or user.pk == bot.owner_id):
        raise PermissionDenied("only the bot's owner (or staff) sees its smoke match and log")
    version = bot.versions.filter(number=number).first()
    if version is None:
        raise NotFound(f"bot {bot.name} has no version {number}")
    return version


def bot_get_by_name(*, name: str) -> Bot:
    """One bot by its (case-insensitive, unique) name or NotFound; the gRPC API uses names."""
    bot = Bot.objects.select_related("owner").filter(name__iexact=name.strip()).first()
    if bot is None:
        raise NotFound(f"no bot named {name.strip()!r}")
    return bot
