"""A connected bot's versions, named by the label its process gives when it connects.

An uploaded bot gets a new version per upload; a connected bot's code is wherever its
process runs, so the process names what it plays (``PlayHello.version_label``, e.g. a
git commit hash). A label the bot has not used before is a new VALID version (the next
number): its own rating entry (seeded from the previous one, as for uploads), a row of
the version lineage, a side of a version comparison. A stream with a label makes that
version the bot's current one, the version new matches seat, even an older label again
(the author went back): what plays is what is connected. Like a new upload, a new
version lifts an automatic suspension; a staff suspension stays. An empty label changes
nothing (the bot's current version plays).
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import partial

from django.db import transaction

from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import _lift
from ladder.common.exceptions import ApplicationError
from ladder.common.pagecache import pages_changed
from ladder.quotas import catalogue
from ladder.quotas.take import quota_take

LABEL_RE = re.compile(r"^[A-Za-z0-9._+:-]{1,64}$")


def version_label_check(label: str) -> str:
    """The label, or ApplicationError saying what a label may be."""
    if not LABEL_RE.match(label):
        raise ApplicationError(
            "version_label: 1-64 characters of letters, digits and . _ + : - (e.g. a git hash)"
        )
    return label


def _labels_named(bot: Bot, since: datetime) -> dict[catalogue.Quota, int]:
    """The new version labels ``bot`` named since ``since`` (each one is a version row)."""
    named = BotVersion.objects.filter(bot=bot, created_at__gte=since).exclude(label="").count()
    quota = catalogue.CONNECTED_LABELS_PER_DAY.about(
        f"new version labels of connected bot {bot.name}"
    )
    return {quota: named}


@transaction.atomic
def connected_version_for_label(*, bot_id: int, label: str) -> BotVersion:
    """The bot's version named ``label`` (made the next version if new), made current."""
    version_label_check(label)
    bot = Bot.objects.select_for_update().get(pk=bot_id)
    if bot.kind != Bot.Kind.CONNECTED:
        raise ApplicationError(f"bot {bot.name} is {bot.kind}: only connected bots name versions")
    version = BotVersion.objects.filter(bot=bot, label=label).first()
    created = version is None
    if version is None:
        quota_take(bot.owner, partial(_labels_named, bot), locked=True)  # the bot's row
        last = BotVersion.objects.filter(bot=bot).order_by("-number").first()
        version = BotVersion.objects.create(
            bot=bot,
            number=(last.number + 1) if last else 1,
            label=label,
            status=BotVersion.Status.VALID,
            validation_log=f"connected bot: version {label!r}, named by its process",
        )
    if bot.current_version_id != version.pk:
        bot.current_version = version
        fields = ["current_version", "updated_at"]
        if created and bot.suspension == Bot.Suspension.AUTO:
            fields += _lift(bot)
        bot.save(update_fields=fields)
        pages_changed()
    return version
