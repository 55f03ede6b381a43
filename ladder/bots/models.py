"""Bots and their immutable versions.

A bot's rating on each ladder is the ratings app's entry
(``ladder.ratings.models.BotRating``, related name ``Bot.ratings``), not a field
here, so uploading a new version keeps it and a ladder with another ruleset or
difficulty has its own.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models.functions import Lower

BOT_NAME_VALIDATOR = RegexValidator(
    r"^[A-Za-z0-9][A-Za-z0-9_.-]{2,31}$",
    "3-32 characters: letters, digits, '_', '.', '-'; starting with a letter or digit.",
)


def _start_rating() -> int:
    """Referenced by migration 0004, which created the rating entries here (they moved to
    ``ladder.ratings``)."""
    return settings.LADDER_ELO_START


class Bot(models.Model):
    """A player of the ladder, owned by one user."""

    class Kind(models.TextChoices):
        HOSTED = "hosted", "hosted (uploaded Python)"
        REMOTE = "remote", "remote (registered endpoint)"
        # Plays over a stream the bot opens to the ladder (Ladder.Play): no public port.
        CONNECTED = "connected", "connected (the bot connects out)"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="bots"
    )
    name = models.CharField(max_length=32, unique=True, validators=[BOT_NAME_VALIDATOR])
    kind = models.CharField(max_length=12, choices=Kind.choices)
    description = models.CharField(max_length=500, blank=True)

    class Suspension(models.TextChoices):
        """Who suspended it, which decides who may lift it."""

        NONE = "", "not suspended"
        STAFF = "staff", "by staff (only staff lift it)"
        AUTO = "auto", "automatically (a new version or the owner lifts it)"

    is_active = models.BooleanField(default=True, db_index=True)
    suspended_reason = models.CharField(max_length=500, blank=True)
    suspension = models.CharField(
        max_length=8, choices=Suspension.choices, default=Suspension.NONE, blank=True
    )
    suspended_at = models.DateTimeField(null=True, blank=True)
    # Auto-suspension only counts matches recorded after this instant: a lifted bot
    # starts with a clean slate instead of being suspended again by its old failures.
    failures_since = models.DateTimeField(
        null=True, blank=True, help_text="Auto-suspend looks only at matches recorded after this."
    )
    retired_at = models.DateTimeField(null=True, blank=True)
    current_version = models.ForeignKey(
        "BotVersion",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The version new matches play (the newest valid); set by the version services.",
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(Lower("name"), name="bot_name_ci_unique"),
        ]
        # The few bots off a board (suspended, retired), which the board's reads set
        # aside by id on the rating index: an index of them, not a scan of every bot.
        indexes = [
            models.Index(
                fields=["id"],
                condition=models.Q(is_active=False) | models.Q(retired_at__isnull=False),
                name="bot_off_board_idx",
            ),
            models.Index(
                fields=["id"], condition=models.Q(retired_at__isnull=False), name="bot_retired_idx"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_retired(self) -> bool:
        return self.retired_at is not None

    @property
    def playable(self) -> bool:
        """May be scheduled: active, not retired, and has a version."""
        return self.is_active and self.retired_at is None


class BotVersion(models.Model):
    """One immutable submission: an archive (hosted) or an endpoint (remote).

    A connected bot has one version (VALID from its creation, neither archive nor
    endpoint): what it plays is whatever process holds its stream.

    A hosted version is PENDING until its smoke match (a short game against the
    random house bot, in the sandbox) makes it VALID or INVALID; only VALID
    versions are ever seated. Remote versions are VALID once their endpoint checks.
    """

    class Status(models.TextChoices):
        PENDING = "pending"
        VALID = "valid"
        INVALID = "invalid"

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    archive = models.FileField(upload_to="bots/", blank=True, max_length=255)
    archive_sha256 = models.CharField(max_length=64, blank=True)
    archive_size = models.PositiveIntegerField(default=0)
    entry_point = models.CharField(max_length=255, blank=True)
    endpoint = models.CharField(max_length=300, blank=True)
    validation_log = models.TextField(blank=True)
    status = models.CharField(
        max_length=8, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    smoke_outcome = models.CharField(max_length=300, blank=True)
    smoke_log = models.FileField(upload_to="logs/", blank=True, max_length=255)
    smoke_at = models.DateTimeField(null=True, blank=True)
    smoke_sent_at = models.DateTimeField(
        null=True, blank=True, help_text="When its smoke match was last sent to the workers."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # A connected bot's version: the label its process named when it connected (e.g. a git
    # hash); one version per label (``ladder.bots.connected_versions``). Empty otherwise.
    label = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["bot", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "number"], name="botversion_bot_number_unique"),
            models.UniqueConstraint(
                fields=["bot", "label"],
                condition=~models.Q(label=""),
                name="botversion_bot_label_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.bot.name} v{self.number}"

    @property
    def kind(self) -> str:
        """``endpoint`` (a remote bot's address), ``connected`` (a connected bot's, named by
        its label) or ``source`` (an uploaded archive)."""
        if self.endpoint:
            return "endpoint"
        return "connected" if self.label or not self.archive else "source"


class ConnectedStream(models.Model):
    """An open Play stream of a connected bot, as presence records it when there is no Redis.

    ``ladder.bots.presence`` keeps these rows when no Redis is configured (``make run``):
    every process of one ladder shares its database, so the workers find a bot's streams
    and the grpcservers count them against the limits. A row not refreshed by its process
    expires (``expires_at``), as a Redis record does; reads ignore expired rows and the
    heartbeat deletes them. Times are epoch seconds, as in the Redis records.
    """

    stream_id = models.CharField(max_length=32, primary_key=True)
    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    token_id = models.BigIntegerField()
    relay = models.CharField(max_length=300)
    since = models.FloatField()
    label = models.CharField(max_length=64, blank=True)
    version_label = models.CharField(max_length=64, blank=True)
    expires_at = models.FloatField(db_index=True)

    class Meta:
        indexes = [models.Index(fields=["bot", "expires_at"], name="connstream_bot_live_idx")]

    def __str__(self) -> str:
        return f"stream {self.stream_id} of bot {self.bot_id}"
