"""Writes: what is owed (``notify``), what users choose, and sending one delivery once.

Exactly once, like results:

- ``notify`` writes one ``Delivery`` row per channel the user chose, in the
  caller's transaction; the database's unique (user, kind, key, channel) makes
  a second telling of the same event a no-op, and a rolled-back event owes
  nothing. The task that sends a row is sent on commit (a worker never gets the
  id of a row it cannot see yet).
- ``delivery_send`` (the task's whole body) claims the row under its lock
  (``SENDING`` until a lease runs out), sends it, and marks it ``SENT``. A row
  that is ``SENT`` is never sent again, whoever delivers the task again and
  however often; a row another worker holds is left to it. What remains is the
  window of every at-least-once transport: a worker killed after the SMTP
  server accepted the message and before the row was marked sends it again
  after the lease. Such a copy carries the same ``Message-ID`` (mail clients
  show one) and the same ``webhook-id`` (receivers drop what they have seen).
- A failure that may pass (a timeout, a 5xx, SMTP 4xx) raises
  ``DeliveryFailed``: the task retries it with exponential backoff (Celery's
  ``autoretry_for``/``retry_backoff``) up to ``LADDER_NOTIFY_MAX_ATTEMPTS``
  attempts, then the row is ``FAILED``. A refusal that will not pass (the URL
  now resolves inside, SMTP 5xx) fails it at once.
- ``deliveries_resend_pending`` (beat) sends again the task of a row whose
  message was lost (the broker was away at commit) or whose worker died.
"""

from __future__ import annotations

import logging
import smtplib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from ladder.accounts.models import User
from ladder.common.exceptions import ApplicationError, NotFound
from ladder.common.ssrf_check import Resolver
from ladder.common.tasks import task_send
from ladder.notifications.kinds import Channel, Kind
from ladder.notifications.messages import email_message, webhook_body, webhook_msg_id
from ladder.notifications.models import KEY_MAX, LINK_MAX, SUBJECT_MAX, Delivery, Subscription
from ladder.notifications.models import Webhook as WebhookRow
from ladder.notifications.selectors import choice_of
from ladder.notifications.signing import (
    unsubscribe_token_read,
    webhook_headers,
    webhook_secret_new,
)
from ladder.notifications.webhooks import WebhookRejected, webhook_post, webhook_url_check

log = logging.getLogger("ladder.notifications")

BODY_MAX = 10_000


class DeliveryFailed(Exception):
    """A delivery failed in a way that may pass: the task retries it with backoff."""


class _Refused(Exception):
    """A delivery was refused in a way that will not pass: it is failed at once."""


# --- what is owed -----------------------------------------------------------------------


def notify(
    *,
    user: User,
    kind: str,
    key: str,
    subject: str,
    body: str,
    link: str = "",
    data: Mapping[str, Any] | None = None,
) -> list[Delivery]:
    """Owe ``user`` a message about one event on each channel they chose for ``kind``.

    Call it inside the transaction of what happened. ``key`` names the event
    within its kind (e.g. ``competition:7:phase:final``): the same (user, kind,
    key) is told once per channel however often this is called. ``link`` is an
    absolute URL (``ladder.notifications.links``); ``data`` are facts a program
    reads from the webhook body (ids). Returns the deliveries this call created;
    each is sent by a task after commit.
    """
    if kind not in Kind.values:
        raise ApplicationError(f"unknown notification kind {kind!r}")
    if not key or len(key) > KEY_MAX:
        raise ApplicationError(f"a notification key has 1 to {KEY_MAX} characters")
    if len(link) > LINK_MAX or (link and not link.startswith(("https://", "http://"))):
        raise ApplicationError(
            f"a notification link is an absolute http(s) URL of at most {LINK_MAX} characters"
        )
    choice = choice_of(user_id=user.pk, kind=kind)
    channels = []
    if choice.email and user.email:
        channels.append(Channel.EMAIL)
    if choice.webhook and WebhookRow.objects.filter(user_id=user.pk).exists():
        channels.append(Channel.WEBHOOK)
    created = []
    for channel in channels:
        try:
            with transaction.atomic():  # a savepoint: a duplicate leaves the caller's intact
                delivery = Delivery.objects.create(
                    user=user,
                    kind=kind,
                    key=key,
                    channel=channel,
                    subject=" ".join(subject.split())[:SUBJECT_MAX],
                    body=body[:BODY_MAX],
                    link=link,
                    data=dict(data or {}),
                )
        except IntegrityError:
            log.info("%s %s for user %s by %s: already owed", kind, key, user.pk, channel)
            continue
        created.append(delivery)
        # robust: a broker away at commit costs the caller nothing (the sweep sends it).
        transaction.on_commit(_sender(delivery.pk), robust=True)
    if created:
        log.info(
            "%s %s for user %s: owed by %s",
            kind,
            key,
            user.pk,
            ", ".join(d.channel for d in created),
        )
    return created


def _sender(delivery_id: int) -> Any:
    """The on-commit callback that sends a delivery's task (named, for on_commit's logs)."""

    def send_notification() -> None:
        task_send(settings.LADDER_TASK_NOTIFY, delivery_id)

    return send_notification


# --- what users choose --------------------------------------------------------------------


@transaction.atomic
def choices_set(*, user: User, choices: Mapping[str, Mapping[str, bool]]) -> None:
    """Store the user's channels for the kinds named: ``{kind: {"email": b, "webhook": b}}``.

    A kind left out keeps what it had; a channel left out of a kind keeps its value.
    """
    unknown = sorted(set(choices) - set(Kind.values))
    if unknown:
        raise ApplicationError(f"unknown notification kinds: {', '.join(unknown)}")
    for kind, wanted in choices.items():
        current = choice_of(user_id=user.pk, kind=kind)
        Subscription.objects.update_or_create(
            user=user,
            kind=kind,
            defaults={
                "email": bool(wanted.get("email", current.email)),
                "webhook": bool(wanted.get("webhook", current.webhook)),
            },
        )


@dataclass(frozen=True)
class WebhookSet:
    """The user's webhook after a change; ``secret`` only when a new one was made."""

    webhook: WebhookRow | None
    secret: str | None


@transaction.atomic
def webhook_set(*, user: User, url: str, resolver: Resolver | None = None) -> WebhookSet:
    """Set (or, with an empty ``url``, remove) the user's webhook URL.

    The URL must pass the ladder's SSRF rules (``webhooks.webhook_url_check``).
    A first URL gets a new secret, returned here once; a changed URL keeps the
    secret (``webhook_secret_rotate`` makes a new one).
    """
    if not url.strip():
        WebhookRow.objects.filter(user=user).delete()
        return WebhookSet(webhook=None, secret=None)
    checked = webhook_url_check(url, resolver=resolver)
    row = WebhookRow.objects.select_for_update().filter(user=user).first()
    if row is None:
        secret = webhook_secret_new()
        row = WebhookRow.objects.create(user=user, url=checked.url, secret=secret)
        log.info("user %s set a webhook: %s", user.pk, checked.url)
        return WebhookSet(webhook=row, secret=secret)
    row.url = checked.url
    row.save(update_fields=["url", "updated_at"])
    log.info("user %s moved their webhook: %s", user.pk, checked.url)
    return WebhookSet(webhook=row, secret=None)


@transaction.atomic
def webhook_secret_rotate(*, user: User) -> str:
    """A new secret for the user's webhook (the old one stops at once); returned once."""
    row = WebhookRow.objects.select_for_update().filter(user=user).first()
    if row is None:
        raise NotFound("you have no webhook; set its URL first")
    row.secret = webhook_secret_new()
    row.save(update_fields=["secret", "updated_at"])
    log.info("user %s made a new webhook secret", user.pk)
    return row.secret


@dataclass(frozen=True)
class Unsubscribed:
    """What an unsubscribe link switched off."""

    user_id: int
    channel: str
    kinds: tuple[str, ...]


def unsubscribe(*, token: str, everything: bool = False) -> Unsubscribed:
    """Switch off the channel of an unsubscribe link for its kind (or, ``everything``, for
    every kind). No sign-in: the signed token is the authority. NotFound for a token that
    was not made here."""
    read = unsubscribe_token_read(token)
    if read is None or read.kind not in Kind.values or read.channel not in Channel.values:
        raise NotFound("this unsubscribe link is not valid (copied in part?)")
    user = User.objects.filter(pk=read.user_id).first()
    if user is None:
        raise NotFound("this unsubscribe link's account no longer exists")
    kinds = tuple(Kind.values) if everything else (read.kind,)
    choices_set(user=user, choices={k: {read.channel: False} for k in kinds})
    log.info("user %s unsubscribed from %s by %s", user.pk, ", ".join(kinds), read.channel)
    return Unsubscribed(user_id=user.pk, channel=read.channel, kinds=kinds)


# --- sending one delivery once ------------------------------------------------------------


def delivery_send(*, delivery_id: int) -> str:
    """Send one delivery unless it was sent; mark it. What happened, in a word.

    ``sent``; ``already sent`` (a task delivered again); ``busy`` (another worker
    holds it); ``skipped`` (the channel was switched off or removed meanwhile);
    ``failed`` (refused for good, or the last attempt failed); ``gone``. Raises
    ``DeliveryFailed`` when a failure may pass and attempts remain (the task
    retries it).
    """
    claimed = _claim(delivery_id)
    if isinstance(claimed, str):
        log.info("delivery %s: %s", delivery_id, claimed)
        return claimed
    delivery, target = claimed
    started = time.monotonic()
    try:
        if delivery.channel == Channel.EMAIL:
            _send_email(delivery, to=target)
        else:
            _send_webhook(delivery)
    except _Refused as exc:
        _finish(delivery, Delivery.Status.FAILED, error=str(exc))
        log.warning("delivery %s (%s %s) refused: %s", delivery.pk, delivery.kind,
                    delivery.channel, exc)  # fmt: skip
        return "failed"
    except DeliveryFailed as exc:
        if delivery.attempts >= settings.LADDER_NOTIFY_MAX_ATTEMPTS:
            _finish(delivery, Delivery.Status.FAILED, error=str(exc))
            log.warning("delivery %s failed after %d attempts: %s", delivery.pk,
                        delivery.attempts, exc)  # fmt: skip
            return "failed"
        _release(delivery, error=str(exc))
        log.info("delivery %s attempt %d failed, to be retried: %s", delivery.pk,
                 delivery.attempts, exc)  # fmt: skip
        raise
    _finish(delivery, Delivery.Status.SENT, target=target)
    log.info("delivery %s (%s %s to user %s) sent in %.2f s, attempt %d", delivery.pk,
             delivery.kind, delivery.channel, delivery.user_id, time.monotonic() - started,
             delivery.attempts)  # fmt: skip
    return "sent"


def _lease() -> timedelta:
    """How long a claim holds: the send's own deadline and slack for the bookkeeping."""
    return timedelta(seconds=2 * settings.LADDER_NOTIFY_TIMEOUT_S + 30)


def _claim(delivery_id: int) -> tuple[Delivery, str] | str:
    """Take the delivery for this attempt (row lock, ``SENDING`` with a lease) and say where
    it goes; or a word for why there is nothing to send."""
    now = timezone.now()
    with transaction.atomic():
        delivery = (
            Delivery.objects.select_for_update(of=("self",))
            .select_related("user")
            .filter(pk=delivery_id)
            .first()
        )
        if delivery is None:
            return "gone"
        if delivery.status == Delivery.Status.SENT:
            return "already sent"
        if delivery.status in (Delivery.Status.SKIPPED, Delivery.Status.FAILED):
            return f"already {delivery.status}"
        if delivery.status == Delivery.Status.SENDING and (
            delivery.claimed_until is not None and delivery.claimed_until > now
        ):
            return "busy"
        target = _target(delivery)
        if target is None:
            delivery.status = Delivery.Status.SKIPPED
            delivery.last_error = "the channel was switched off or removed before it went"
            delivery.save(update_fields=["status", "last_error"])
            return "skipped"
        if delivery.attempts >= settings.LADDER_NOTIFY_MAX_ATTEMPTS:
            delivery.status = Delivery.Status.FAILED
            delivery.save(update_fields=["status"])
            return "failed"
        delivery.status = Delivery.Status.SENDING
        delivery.attempts += 1
        delivery.claimed_until = now + _lease()
        delivery.save(update_fields=["status", "attempts", "claimed_until"])
    return delivery, target


def _target(delivery: Delivery) -> str | None:
    """Where the delivery goes now (an address or a URL); None when the user no longer
    wants it there (the choice is read at send time: an unsubscribe stops what is owed)."""
    if not choice_of(user_id=delivery.user_id, kind=delivery.kind).wants(delivery.channel):
        return None
    if delivery.channel == Channel.EMAIL:
        return delivery.user.email or None
    row = WebhookRow.objects.filter(user_id=delivery.user_id).first()
    return row.url if row else None


def _send_email(delivery: Delivery, *, to: str) -> None:
    """Hand the e-mail to the configured backend (SMTP: ``EMAIL_*``, ``EMAIL_TIMEOUT``)."""
    try:
        email_message(delivery, to=to).send()
    except smtplib.SMTPResponseException as exc:
        if 500 <= exc.smtp_code < 600:
            raise _Refused(f"SMTP {exc.smtp_code}: {exc.smtp_error!r}") from exc
        raise DeliveryFailed(f"SMTP {exc.smtp_code}: {exc.smtp_error!r}") from exc
    except smtplib.SMTPRecipientsRefused as exc:
        codes = [code for code, _ in exc.recipients.values()]
        if codes and all(code >= 500 for code in codes):
            raise _Refused(f"SMTP refused the recipient: {exc.recipients!r}") from exc
        raise DeliveryFailed(f"SMTP refused the recipient for now: {exc.recipients!r}") from exc
    except (smtplib.SMTPException, OSError) as exc:
        raise DeliveryFailed(f"SMTP: {exc!r}") from exc


def _send_webhook(delivery: Delivery) -> None:
    """POST the signed body to the user's webhook, checked again (SSRF) right before."""
    row = WebhookRow.objects.filter(user_id=delivery.user_id).first()
    if row is None:
        raise _Refused("the webhook was removed")
    try:
        checked = webhook_url_check(row.url)
    except WebhookRejected as exc:
        raise _Refused(f"webhook URL refused now: {exc.message}") from exc
    body = webhook_body(delivery)
    headers = webhook_headers(
        secret=row.secret,
        msg_id=webhook_msg_id(delivery),
        timestamp=int(time.time()),
        body=body,
    )
    try:
        answer = webhook_post(
            checked, body=body, headers=headers, timeout_s=settings.LADDER_NOTIFY_TIMEOUT_S
        )
    except OSError as exc:
        raise DeliveryFailed(f"webhook unreachable: {exc!r}") from exc
    if answer.status == 410:  # Gone: the receiver asks for no more
        raise _Refused(f"webhook answered 410 Gone: {answer.excerpt!r}")
    if not answer.ok:
        raise DeliveryFailed(f"webhook answered {answer.status}: {answer.excerpt!r}")


def _finish(delivery: Delivery, status: str, *, target: str = "", error: str = "") -> None:
    """Mark the claimed delivery ``SENT`` or ``FAILED``."""
    fields: dict[str, Any] = {"status": status, "claimed_until": None, "last_error": error[:500]}
    if status == Delivery.Status.SENT:
        fields.update(sent_at=timezone.now(), target=target[:500])
    Delivery.objects.filter(pk=delivery.pk).update(**fields)


def _release(delivery: Delivery, *, error: str) -> None:
    """Give the delivery back for the task's retry; the sweep leaves it alone for as long as
    the longest retry delay, so it does not race the retry."""
    Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.SENDING).update(
        status=Delivery.Status.PENDING,
        claimed_until=timezone.now() + timedelta(seconds=settings.LADDER_NOTIFY_RETRY_MAX_S),
        last_error=error[:500],
    )


def deliveries_resend_pending(*, grace_s: float) -> list[int]:
    """Send again the tasks of deliveries still owed after ``grace_s`` (a lost message, a dead
    worker, retries that ran out on a worker that went away). For beat; at most 500 a pass.

    A row a task holds or will retry is left alone until its ``claimed_until``; a row
    sent again here is left alone for another ``grace_s`` (a busy queue does not fill up
    with copies of its message).
    """
    now = timezone.now()
    with transaction.atomic():
        stale = list(
            Delivery.objects.select_for_update(skip_locked=True)
            .filter(
                status__in=(Delivery.Status.PENDING, Delivery.Status.SENDING),
                created_at__lt=now - timedelta(seconds=grace_s),
            )
            .exclude(claimed_until__gt=now)
            .order_by("id")
            .values_list("pk", flat=True)[:500]
        )
        Delivery.objects.filter(pk__in=stale).update(
            status=Delivery.Status.PENDING, claimed_until=now + timedelta(seconds=grace_s)
        )
        for pk in stale:
            transaction.on_commit(_sender(pk), robust=True)
    if stale:
        log.info("deliveries sent again: %s", stale)
    return stale
