"""Bot services: create, change, delete, upload a version, set an endpoint, moderate.

Authorization lives here (not in views) so the REST API and the gRPC service
enforce the same rules: only the owner changes or deletes a bot; staff moderate
(suspend/unsuspend); the ladder suspends a failing bot itself (``bot_auto_suspend``),
which its owner or a new version lifts. Versions are immutable and numbered per bot; the newest
VALID version is the bot's ``current_version`` (what matches seat: a remote
endpoint is valid once it checks, a hosted upload once its smoke match passes),
and no version touches the bot's ratings. A new bot
gets a rating entry on every configured ladder, so it is on every leaderboard.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from pathlib import PurePosixPath

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Max, Q, Sum
from django.utils import timezone

from ladder.accounts.models import User
from ladder.bots.models import Bot, BotVersion
from ladder.bots.selectors import version_for_smoke
from ladder.bots.uploads import UploadReport, validate_upload
from ladder.bots.version_pruning import versions_make_room
from ladder.common.exceptions import ApplicationError, Conflict, NotFound, PermissionDenied
from ladder.common.logs import log_delete_later, log_store
from ladder.common.pagecache import pages_changed
from ladder.common.ssrf_check import Resolver, endpoint_check
from ladder.common.tasks import task_send
from ladder.ladders import ladders
from ladder.notifications import events as notify_events
from ladder.quotas import catalogue
from ladder.quotas.take import quota_take
from ladder.ratings.services import bot_ratings_ensure

log = logging.getLogger("ladder.bots")


class UploadRejected(ApplicationError):
    """The uploaded source failed validation; ``report`` says why."""

    code = "upload_rejected"

    def __init__(self, report: UploadReport) -> None:
        super().__init__(
            "upload rejected: " + "; ".join(report.errors),
            extra={"report": report.as_text().splitlines(), "errors": report.errors},
        )
        self.report = report


def _validation_message(exc: ValidationError) -> str:
    if hasattr(exc, "message_dict"):
        return "; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())
    return " ".join(exc.messages)


def _lock_owned_bot(*, user: User, bot_id: int) -> Bot:
    """Lock and return a bot the user owns; 404 if missing, 403 if someone else's."""
    bot = Bot.objects.select_for_update().filter(pk=bot_id).first()
    if bot is None:
        raise NotFound("no such bot")
    if bot.owner_id != user.pk:
        raise PermissionDenied("only the owner can change this bot")
    if bot.retired_at is not None:
        raise Conflict("this bot is retired")
    return bot


def _bots_held(owner: User, since: datetime) -> dict[catalogue.Quota, int]:
    """The bots ``owner`` has (not retired)."""
    held = Bot.objects.filter(owner=owner, retired_at__isnull=True).count()
    return {catalogue.BOTS_PER_USER: held}


def _bytes_stored(owner: User, since: datetime) -> dict[catalogue.Quota, int]:
    """The bytes of the archives ``owner`` keeps stored (pruned versions keep none)."""
    stored = BotVersion.objects.filter(bot__owner=owner).exclude(archive="")
    return {catalogue.BYTES_PER_USER: int(stored.aggregate(n=Sum("archive_size"))["n"] or 0)}


@transaction.atomic
def bot_create(
    *,
    owner: User,
    name: str,
    kind: str,
    description: str = "",
    endpoint: str | None = None,
    resolver: Resolver | None = None,
) -> Bot:
    """Create a bot; a remote bot may register its endpoint at once."""
    if kind not in Bot.Kind.values:
        raise ApplicationError(f"kind must be one of {', '.join(Bot.Kind.values)}")
    if endpoint and kind != Bot.Kind.REMOTE:
        raise ApplicationError("only remote bots have an endpoint")
    checked = endpoint_check(endpoint, resolver=resolver) if endpoint else None
    bot = Bot(owner=owner, name=name.strip(), kind=kind, description=description)
    try:
        bot.full_clean()
    except ValidationError as exc:
        if Bot.objects.filter(name__iexact=bot.name).exists():
            raise Conflict(f"a bot named {bot.name!r} already exists") from exc
        raise ApplicationError(_validation_message(exc)) from exc
    if Bot.objects.filter(name__iexact=bot.name).exists():
        raise Conflict(f"a bot named {bot.name!r} already exists")
    quota_take(owner, partial(_bots_held, owner))
    try:
        with transaction.atomic():
            bot.save()
    except IntegrityError as exc:
        raise Conflict(f"a bot named {bot.name!r} already exists") from exc
    bot_ratings_ensure(bot_ids=[bot.pk], ladder_keys=list(ladders()))
    pages_changed()  # on the leaderboard now
    if checked is not None:
        _add_version(bot, number=1, endpoint=checked.target, status=BotVersion.Status.VALID)
    elif kind == Bot.Kind.CONNECTED:
        # Nothing to validate: it plays while one of its streams is open (presence).
        _add_version(
            bot,
            number=1,
            validation_log="connected bot: plays while it holds a Play stream",
            status=BotVersion.Status.VALID,
        )
    return bot


def _add_version(bot: Bot, **fields: object) -> BotVersion:
    """Store the next version of a locked (or new) bot; a VALID one is what matches play."""
    version = BotVersion.objects.create(bot=bot, **fields)
    pages_changed()  # the bot's page lists its versions
    if version.status == BotVersion.Status.VALID:
        _make_current(bot, version)
    return version


def _make_current(bot: Bot, version: BotVersion) -> None:
    """Seat ``version`` from now on, unless a newer valid one already is (a locked bot).

    A new playable version lifts an automatic suspension: the failures were the
    old version's (a staff suspension stays).
    """
    current = bot.current_version
    if current is None or current.number < version.number:
        bot.current_version = version
        fields = ["current_version", "updated_at"]
        if bot.suspension == Bot.Suspension.AUTO:
            fields += _lift(bot)
        bot.save(update_fields=fields)


def _lift(bot: Bot) -> list[str]:
    """Make a suspended bot active again with a clean slate; the fields to save."""
    bot.is_active = True
    bot.suspended_reason = ""
    bot.suspension = Bot.Suspension.NONE
    bot.suspended_at = None
    bot.failures_since = timezone.now()
    return ["is_active", "suspended_reason", "suspension", "suspended_at", "failures_since"]


@transaction.atomic
def bot_update(*, user: User, bot_id: int, description: str | None = None) -> Bot:
    """Change the owner-editable fields of a bot."""
    bot = _lock_owned_bot(user=user, bot_id=bot_id)
    if description is not None:
        bot.description = description
    bot.full_clean()
    bot.save(update_fields=["description", "updated_at"])
    pages_changed()
    return bot


@transaction.atomic
def bot_delete(*, user: User, bot_id: int) -> bool:
    """Delete a bot; one that has played is retired instead so history stays whole.

    Returns True when the row was deleted, False when it was retired.
    """
    bot = _lock_owned_bot(user=user, bot_id=bot_id)
    pages_changed()  # gone from the leaderboard either way
    if not bot.seats.exists():
        names = list(bot.versions.exclude(archive="").values_list("archive", flat=True))
        bot.delete()

        def delete_files() -> None:
            for name in names:
                default_storage.delete(name)

        transaction.on_commit(delete_files)
        return True
    bot.retired_at = timezone.now()
    bot.is_active = False
    bot.save(update_fields=["retired_at", "is_active", "updated_at"])
    return False


def _next_number(bot: Bot) -> int:
    return (bot.versions.aggregate(m=Max("number"))["m"] or 0) + 1


def bot_version_upload(
    *, user: User, bot_id: int, filename: str, data: bytes, entry_point: str | None = None
) -> BotVersion:
    """Validate uploaded source and store it as the bot's next version, PENDING.

    Validation runs before anything is written; on rejection nothing is stored and
    UploadRejected carries the report. The version becomes VALID (playable) or
    INVALID with its smoke match (``bot_version_smoke_record``), which a worker
    plays; the upload itself never waits for it.
    """
    report = validate_upload(filename=filename, data=data, entry_point=entry_point or None)
    if not report.ok:
        raise UploadRejected(report)
    digest = hashlib.sha256(data).hexdigest()
    suffix = ".zip" if report.kind == "zip" else ".py"
    with transaction.atomic():
        bot = _lock_owned_bot(user=user, bot_id=bot_id)
        if bot.kind != Bot.Kind.HOSTED:
            raise ApplicationError("only hosted bots take uploads; set an endpoint instead")
        pruned = versions_make_room(user, bot)
        quota_take(user, partial(_bytes_stored, user), adding=len(data))
        number = _next_number(bot)
        stored = default_storage.save(
            str(PurePosixPath("bots", str(bot.pk), f"v{number}-{digest[:16]}{suffix}")),
            ContentFile(data),
        )
        try:
            version = _add_version(
                bot,
                number=number,
                archive=stored,
                archive_sha256=digest,
                archive_size=len(data),
                entry_point=report.entry_point,
                validation_log=report.as_text() + _pruned_note(pruned),
                status=BotVersion.Status.PENDING,
                smoke_sent_at=timezone.now(),
            )
        except BaseException:
            default_storage.delete(stored)
            raise
        transaction.on_commit(_smoke_sender(version.pk))
    return version


def _pruned_note(pruned: list[int]) -> str:
    if not pruned:
        return ""
    numbers = ", ".join(f"v{n}" for n in pruned)
    return (
        f"\nstored versions pruned to make room: {numbers} (their archives are deleted, "
        "their records and results kept; LADDER_QUOTA_VERSIONS_PER_BOT)"
    )


def _smoke_sender(version_id: int) -> Callable[[], None]:
    """The on-commit callback that sends a version's smoke match (a named function:
    Django's robust on_commit logs failures by ``__qualname__``)."""

    def send_smoke_match() -> None:
        task_send(settings.LADDER_TASK_SMOKE_VERSION, version_id)

    return send_smoke_match


def bot_versions_resend_pending(*, grace_s: float) -> list[int]:
    """Send again the smoke matches of versions PENDING for longer than ``grace_s``.

    For the janitor: a message lost with the broker, or a smoke match whose
    engine was down, would otherwise leave a version pending for good. Each
    version is sent at most once per ``grace_s``; the task itself skips a
    version that is no longer pending.
    """
    cutoff = timezone.now() - timedelta(seconds=grace_s)
    with transaction.atomic():
        stale = list(
            BotVersion.objects.select_for_update(skip_locked=True)
            .filter(status=BotVersion.Status.PENDING, bot__kind=Bot.Kind.HOSTED)
            .filter(Q(smoke_sent_at__isnull=True) | Q(smoke_sent_at__lt=cutoff))
            .values_list("pk", flat=True)[:500]
        )
        BotVersion.objects.filter(pk__in=stale).update(smoke_sent_at=timezone.now())
        for pk in stale:
            transaction.on_commit(_smoke_sender(pk))
    return stale


@transaction.atomic
def bot_set_endpoint(
    *, user: User, bot_id: int, endpoint: str, resolver: Resolver | None = None
) -> BotVersion:
    """Register a remote bot's (new) endpoint as its next version."""
    checked = endpoint_check(endpoint, resolver=resolver)
    bot = _lock_owned_bot(user=user, bot_id=bot_id)
    if bot.kind != Bot.Kind.REMOTE:
        raise ApplicationError("only remote bots have an endpoint; upload a version instead")
    return _add_version(
        bot,
        number=_next_number(bot),
        endpoint=checked.target,
        validation_log=f"{checked.target}: resolves to {', '.join(checked.addresses)}",
        status=BotVersion.Status.VALID,
    )


def bot_version_smoke_record(
    *, version_id: int, passed: bool, outcome: str, log: bytes
) -> BotVersion:
    """Record a hosted version's smoke match: VALID or INVALID, what happened, its log.

    The log goes to storage first, under a fresh name, so the row never points at a
    missing file; a log it replaces (the match played again) is deleted after commit.
    """
    version = version_for_smoke(version_id=version_id)
    where = PurePosixPath("logs", "bots", str(version.bot_id), f"v{version.number}-smoke.log")
    name = log_store(name=str(where), data=log)
    with transaction.atomic():
        # ``of``: PostgreSQL cannot lock the nullable side of the outer join.
        bot = (
            Bot.objects.select_for_update(of=("self",))
            .select_related("current_version")
            .get(pk=version.bot_id)
        )
        version = BotVersion.objects.select_for_update().get(pk=version_id)
        log_delete_later(version.smoke_log.name)
        version.status = BotVersion.Status.VALID if passed else BotVersion.Status.INVALID
        version.smoke_outcome = outcome[:300]
        version.smoke_log = name
        version.smoke_at = timezone.now()
        version.save(update_fields=["status", "smoke_outcome", "smoke_log", "smoke_at"])
        pages_changed()
        if passed:
            _make_current(bot, version)
        notify_events.smoke_judged(
            owner=bot.owner,
            bot_id=bot.pk,
            bot_name=bot.name,
            version_id=version.pk,
            number=version.number,
            passed=passed,
            outcome=version.smoke_outcome,
        )
    return version


def _lock_for_staff(*, user: User, bot_id: int) -> Bot:
    if not user.is_staff:
        raise PermissionDenied("only staff can moderate bots")
    bot = Bot.objects.select_for_update().filter(pk=bot_id).first()
    if bot is None:
        raise NotFound("no such bot")
    return bot


@transaction.atomic
def bot_suspend(*, user: User, bot_id: int, reason: str) -> Bot:
    """Staff: stop a bot from being scheduled, with a reason its owner sees.

    Only staff lift a staff suspension (the owner cannot undo moderation).
    """
    reason = reason.strip()
    if not reason:
        raise ApplicationError("a reason is required to suspend a bot")
    bot = _lock_for_staff(user=user, bot_id=bot_id)
    bot.is_active = False
    bot.suspended_reason = reason[:500]
    bot.suspension = Bot.Suspension.STAFF
    bot.suspended_at = timezone.now()
    bot.save(
        update_fields=["is_active", "suspended_reason", "suspension", "suspended_at", "updated_at"]
    )
    pages_changed()
    _tell_suspended(bot, by_staff=True)
    return bot


@transaction.atomic
def bot_auto_suspend(*, bot_id: int, reason: str, match_id: int | None = None) -> bool:
    """The ladder itself: take a failing bot off the matchmaker, with a reason its owner sees.

    Called by the recording side when a bot's recent matches cross the
    thresholds (``ladder.finishing.suspensions``). Only an active bot is
    suspended (a staff suspension or a retirement is left as it is); True when
    this call suspended it. A new version or the owner lifts it. The owner is
    told (``ladder.notifications``), with a link to ``match_id``'s logs: the
    match that crossed the line.
    """
    bot = Bot.objects.select_for_update().filter(pk=bot_id).first()
    if bot is None or not bot.playable:
        return False
    bot.is_active = False
    bot.suspended_reason = f"automatically suspended: {reason}"[:500]
    bot.suspension = Bot.Suspension.AUTO
    bot.suspended_at = timezone.now()
    bot.save(
        update_fields=["is_active", "suspended_reason", "suspension", "suspended_at", "updated_at"]
    )
    pages_changed()
    log.warning("bot %s (%s) suspended automatically: %s", bot.pk, bot.name, reason)
    _tell_suspended(bot, by_staff=False, match_id=match_id)
    return True


def _tell_suspended(bot: Bot, *, by_staff: bool, match_id: int | None = None) -> None:
    """Owe the owner a message about the suspension, in its transaction."""
    assert bot.suspended_at is not None
    notify_events.bot_suspended(
        owner=bot.owner,
        bot_id=bot.pk,
        bot_name=bot.name,
        reason=bot.suspended_reason,
        suspended_at=bot.suspended_at,
        by_staff=by_staff,
        match_id=match_id,
    )


@transaction.atomic
def bot_unsuspend(*, user: User, bot_id: int) -> Bot:
    """Make a suspended bot active again: staff always; its owner when the ladder suspended it.

    A staff suspension is lifted by staff only (moderation is not the owner's to
    undo). The bot starts with a clean slate: auto-suspend only counts matches
    recorded from now on.
    """
    bot = Bot.objects.select_for_update().filter(pk=bot_id).first()
    if bot is None:
        raise NotFound("no such bot")
    owner_may = bot.owner_id == user.pk and bot.suspension == Bot.Suspension.AUTO
    if not (user.is_staff or owner_may):
        if bot.owner_id == user.pk and not bot.is_active:
            raise PermissionDenied("this bot was suspended by staff; only staff can lift it")
        raise PermissionDenied("only staff, or the owner of an automatically suspended bot")
    if bot.retired_at is not None:
        raise Conflict("a retired bot cannot be reactivated")
    if bot.is_active:
        return bot
    bot.save(update_fields=[*_lift(bot), "updated_at"])
    pages_changed()
    return bot
