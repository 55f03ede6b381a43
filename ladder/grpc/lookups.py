"""Bots by the names authors call them, for the servicer and the Play stream alike."""

from __future__ import annotations

from typing import Any

from ladder.bots import selectors as bot_selectors
from ladder.bots.models import Bot
from ladder.common.exceptions import ApplicationError, PermissionDenied


def bot_named(name: str, ladder: str | None = None) -> Bot:
    if not name.strip():
        raise ApplicationError("bot name is empty")
    if "\x00" in name:  # PostgreSQL refuses NUL in text: say so instead of failing
        raise ApplicationError("bot name contains a NUL character")
    return bot_selectors.bot_get_by_name(name=name, ladder=ladder)


def own_bot_named(name: str, user: Any) -> Bot:
    """A bot ``user`` owns: NOT_FOUND if unknown, PERMISSION_DENIED if someone else's."""
    bot = bot_named(name)
    if bot.owner_id != user.pk:
        raise PermissionDenied(f"bot {bot.name} belongs to another user")
    return bot
