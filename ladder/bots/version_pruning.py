"""Stored versions per bot (``ladder.quotas.catalogue.VERSIONS_PER_BOT``): pruned, then refused.

Called by the upload service inside its transaction, under the bot's row lock.
A bot keeps at most ``LADDER_QUOTA_VERSIONS_PER_BOT`` stored archives: an upload
past it prunes the oldest ones that nothing needs any more (not the current
version, not one still waiting for its smoke match, not one an open match has
seated), deleting their archive and keeping their row, so every replay and
match that names a pruned version still finds its metadata (number, digest,
size, validation and smoke outcome). Pruned versions are INVALID (never seated
again) and the owner is told in the new version's validation log. Only when
nothing can be pruned is the upload refused.
"""

from __future__ import annotations

import logging

from django.db import transaction

from ladder.accounts.models import User
from ladder.bots.models import Bot, BotVersion
from ladder.quotas.catalogue import VERSIONS_PER_BOT
from ladder.quotas.take import quota_exempt

log = logging.getLogger("ladder.bots")

OPEN_MATCH_STATES = ("queued", "running")  # a seated version's archive is still needed


def versions_make_room(owner: User, bot: Bot) -> list[int]:
    """Prune the oldest stored versions of a locked ``bot`` so one more fits; their numbers.

    Refuses with ``QuotaExceeded`` when too few can be pruned.
    """
    limit = VERSIONS_PER_BOT.limit
    stored = bot.versions.exclude(archive="")
    count = stored.count()
    if quota_exempt(owner) or limit <= 0 or count < limit:
        return []
    prunable = list(
        stored.exclude(pk=bot.current_version_id or 0)
        .exclude(status=BotVersion.Status.PENDING)
        .exclude(seats__match__status__in=OPEN_MATCH_STATES)
        .order_by("number")
        .distinct()[: count - limit + 1]
    )
    if count - len(prunable) >= limit:
        VERSIONS_PER_BOT.refuse(used=count)
    names = [v.archive.name for v in prunable]
    note = (
        f"pruned: this bot keeps at most {limit} stored versions "
        "(LADDER_QUOTA_VERSIONS_PER_BOT); the archive was deleted, the record kept"
    )
    BotVersion.objects.filter(pk__in=[v.pk for v in prunable]).update(
        archive="", status=BotVersion.Status.INVALID, smoke_outcome=note
    )

    def delete_files() -> None:
        for name in names:
            BotVersion.archive.field.storage.delete(name)

    transaction.on_commit(delete_files)
    numbers = [v.number for v in prunable]
    log.info("bot %s: pruned stored versions %s", bot.name, numbers)
    return numbers
