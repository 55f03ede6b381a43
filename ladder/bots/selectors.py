"""Read-side queries for bots."""

from __future__ import annotations

from django.db.models import QuerySet

from ladder.accounts.models import User
from ladder.bots.models import Bot, BotVersion
from ladder.common.exceptions import NotFound


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
    """The version a new match would play."""
    return bot.versions.order_by("-number").first()


def bot_get_by_name(*, name: str) -> Bot:
    """One bot by its (case-insensitive, unique) name or NotFound; the gRPC API uses names."""
    bot = Bot.objects.select_related("owner").filter(name__iexact=name.strip()).first()
    if bot is None:
        raise NotFound(f"no bot named {name.strip()!r}")
    return bot
