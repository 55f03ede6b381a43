"""Users and their API tokens.

The custom User exists from the first migration so it can grow without the
painful swap later. Tokens are random secrets shown once; only their SHA-256
digest is stored (a fast hash is enough for 256-bit random secrets), with a
short prefix so owners can tell them apart.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models


class User(AbstractUser):
    """A person who owns bots; staff users moderate."""


class ApiToken(models.Model):
    """A revocable API token of a user; several per user."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=64, blank=True)
    prefix = models.CharField(max_length=12, help_text="First characters, for recognition only.")
    digest = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class LimitCounter(models.Model):
    """Units of one limit taken in one window (``ladder.accounts.counters``).

    The database is the one store every process of the ladder shares whatever its
    cache is, and a conditional ``UPDATE`` is atomic on SQLite and PostgreSQL, so
    a window's count can never pass its limit however many requests arrive at once.
    """

    key = models.CharField(max_length=128, help_text="limit name and a digest of whom it counts")
    window = models.BigIntegerField(help_text="window number: unix time // period")
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["key", "window"], name="limit_counter_key_window")
        ]

    def __str__(self) -> str:
        return f"{self.key}@{self.window}: {self.count}"
