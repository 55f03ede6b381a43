"""A match between 2-4 bots, from queued to finished."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from ladder.ladders import Difficulty


class Match(models.Model):
    """A game between 2-4 bots, from queued to finished (or errored/cancelled)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        FINISHED = "finished"
        ERRORED = "errored"
        CANCELLED = "cancelled"

    Difficulty = Difficulty

    ladder = models.CharField(
        max_length=32,
        blank=True,
        help_text="Key of the ladder it is played on (its ratings); empty: off-ladder, unrated.",
    )
    ruleset = models.CharField(max_length=16, default="dd-1")
    seed = models.BigIntegerField()
    difficulty = models.CharField(max_length=10, choices=Difficulty.choices, default="normal")
    rated = models.BooleanField(default=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    tournament = models.ForeignKey(
        "tournaments.Tournament",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="matches",
    )
    tournament_round = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Swiss: the round it belongs to (from 1)."
    )
    deal = models.ForeignKey(
        "tournaments.Deal", null=True, blank=True, on_delete=models.PROTECT, related_name="matches"
    )
    deal_rotation = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Seat rotation within its deal (0..seats-1)."
    )
    priority = models.PositiveSmallIntegerField(
        default=0,
        help_text="Queue priority: 0 ladder; higher is played first (tournaments, comparisons).",
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    attempts = models.PositiveIntegerField(default=0)
    claimed_by = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # When a play-match message was last sent for it: a queued match whose message is
    # older than LADDER_QUEUED_GRACE_S is presumed lost and sent again (the janitor).
    enqueued_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    replay = models.FileField(upload_to="replays/", blank=True, max_length=255)
    replay_sha256 = models.CharField(max_length=64, blank=True)
    replay_size = models.PositiveBigIntegerField(default=0)

    class Meta:
        # Ids are allocated in creation order: newest first is ``-id``, which keyset
        # pagination and the indexes below serve without a sort.
        ordering = ["-id"]
        verbose_name_plural = "matches"
        constraints = [
            models.CheckConstraint(condition=Q(seed__gte=0), name="match_seed_nonnegative"),
            models.CheckConstraint(
                condition=~Q(status="finished") | ~Q(replay_sha256=""),
                name="match_finished_has_replay",
            ),
            models.CheckConstraint(
                condition=Q(rated=False) | ~Q(ladder=""), name="match_rated_has_ladder"
            ),
            models.CheckConstraint(
                condition=Q(deal__isnull=True, deal_rotation__isnull=True)
                | Q(deal__isnull=False, deal_rotation__isnull=False),
                name="match_deal_has_rotation",
            ),
            models.UniqueConstraint(
                fields=["deal", "deal_rotation"],
                name="match_deal_rotation_unique",
                condition=Q(deal__isnull=False),
            ),
        ]
        indexes = [
            models.Index(fields=["status", "-id"], name="match_status_idx"),
            models.Index(fields=["ladder", "-id"], name="match_ladder_idx"),
            models.Index(fields=["tournament", "-id"], name="match_tournament_idx"),
            # The tournament list counts each one's finished matches from this index alone
            # (the plain one visited every match's row to check its status: 10 ms a list).
            models.Index(
                fields=["tournament"],
                name="match_tournament_finished_idx",
                condition=Q(status="finished", tournament__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"match {self.pk} ({self.status})"
