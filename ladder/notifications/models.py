"""What users chose to be told, where, and every message owed to them.

- ``Subscription``: a user's choice for one kind (e-mail, webhook); no row means
  the kind's defaults (``kinds.DEFAULTS``).
- ``Webhook``: a user's webhook URL and the secret its messages are signed with.
- ``Delivery``: one message owed to one user on one channel for one event. The
  database refuses a second row for the same (user, kind, key, channel), so an
  event told twice (a retried transaction, two schedulers) is owed once; the
  row is written in the transaction of the event itself, so a rolled-back event
  owes nothing. A task sends it and marks it sent; a later delivery of the same
  task finds it sent and sends nothing.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from ladder.notifications.kinds import Channel, Kind

KEY_MAX = 200
SUBJECT_MAX = 200
LINK_MAX = 500
WEBHOOK_URL_MAX = 500


class Subscription(models.Model):
    """One user's choice of channels for one kind of event."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_choices"
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    email = models.BooleanField()
    webhook = models.BooleanField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "kind"], name="notify_subscription_once")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} {self.kind}: email={self.email} webhook={self.webhook}"


class Webhook(models.Model):
    """Where a user's webhook messages go, and the key that signs them (Standard Webhooks).

    The secret is kept as it is (an HMAC key must be known to sign), shown to its
    owner once when made; a new one replaces it at once.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_webhook"
    )
    url = models.CharField(max_length=WEBHOOK_URL_MAX)
    secret = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user_id}: {self.url}"


class Delivery(models.Model):
    """One message owed to a user on one channel for one event; sent at most once."""

    class Status(models.TextChoices):
        PENDING = "pending"  # owed; a task is on its way (or the sweep sends one again)
        SENDING = "sending"  # a task claimed it until ``claimed_until``
        SENT = "sent"  # handed to the SMTP server or answered 2xx by the webhook
        SKIPPED = "skipped"  # the channel was switched off or removed before it went
        FAILED = "failed"  # refused for good, or every attempt failed

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notification_deliveries"
    )
    kind = models.CharField(max_length=32, choices=Kind.choices)
    key = models.CharField(max_length=KEY_MAX, help_text="names the event within its kind")
    channel = models.CharField(max_length=16, choices=Channel.choices)
    subject = models.CharField(max_length=SUBJECT_MAX)
    body = models.TextField()
    link = models.CharField(max_length=LINK_MAX, blank=True)
    data = models.JSONField(default=dict, blank=True, help_text="facts for programs (ids)")
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    attempts = models.PositiveIntegerField(default=0)
    claimed_until = models.DateTimeField(null=True, blank=True)
    target = models.CharField(max_length=WEBHOOK_URL_MAX, blank=True, help_text="where it went")
    last_error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["user", "kind", "key", "channel"], name="notify_delivery_once"
            )
        ]
        indexes = [models.Index(fields=["user", "-id"], name="notify_delivery_user")]
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.key} to {self.user_id} by {self.channel}: {self.status}"
