"""The "compare two versions" form of a bot, offered with the versions that may play."""

from __future__ import annotations

from typing import Any

from ladder.bots import selectors as bot_selectors
from ladder.bots.models import Bot, BotVersion
from ladder.web.forms import ComparisonForm


def valid_versions(bot: Bot) -> list[int]:
    """The numbers of the bot's versions that may play (only valid ones can be compared)."""
    return sorted(
        v.number for v in bot_selectors.bot_versions(bot=bot) if v.status == BotVersion.Status.VALID
    )


def comparison_form(bot: Bot, data: Any = None) -> ComparisonForm:
    return ComparisonForm(data, versions=valid_versions(bot), prefix="compare")
