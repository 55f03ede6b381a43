"""The bots' quotas: bots per user, stored versions per bot, stored bytes per user.

Called by the bot services inside their transaction, after ``quota_lock``.
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
from django.db.models import Sum

from ladder.accounts.models import User
from ladder.accounts.quotas import quota_check, quota_exempt, quota_limit
from ladder.bots.models import Bot, BotVersion

log = logging.getLogger("ladder.bots")

OPEN_MATCH_STATES = ("queued", "running")  # a seated version's archive is still needed


def bots_quota_check(owner: User) -> None:
    used = Bot.objects.filter(owner=owner, retired_at__isnull=True).count()
    quota_check(owner, "LADDER_QUOTA_BOTS_PER_USER", used=used, what="bots per user")


def stored_bytes(owner: User) -> int:
    stored = BotVersion.objects.filter(bot__owner=owner).exclude(archive="")
    return int(stored.aggregate(n=Sum("archive_size"))["n"] or 0)


def bytes_quota_check(owner: User, adding: int) -> None:
    quota_check(
        owner,
        "LADDER_QUOTA_BYTES_PER_USER",
        used=stored_bytes(owner),
        adding=adding,
        what="stored bytes of uploads per user (delete old bots or versions)",
    )


def versions_make_room(owner: User, bot: Bot) -> list[int]:
    """Prune the oldest stored versions of a locked ``bot`` so one more fits; their numbers.

    Refuses with ``QuotaExceeded`` when too few can be pruned.
    """
    limit = quota_limit("LADDER_QUOTA_VERSIONS_PER_BOT")
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
        quota_check(
            owner,
            "LADDER_QUOTA_VERSIONS_PER_BOT",
            used=count,
            what="stored versions per bot (the others are current, pending or in open matches)",
        )
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
