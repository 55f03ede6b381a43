"""Tournaments, matches, seats and the one recorded result of a match.

``MatchResult`` is a one-to-one row per match: the database itself refuses a
second result (aiarena's shape). Its auto-increment id is the order in which
results were recorded; ``rerate`` replays ratings in that order.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from ladder.ladders import Difficulty


class Tournament(models.Model):
    """A named set of participants; formats and standings come with a later issue."""

    class Format(models.TextChoices):
        ROUND_ROBIN = "round_robin", "round robin"
        SWISS = "swiss", "swiss"

    name = models.CharField(max_length=100, unique=True)
    format = models.CharField(max_length=16, choices=Format.choices, default=Format.ROUND_ROBIN)
    participants = models.ManyToManyField("bots.Bot", related_name="tournaments", blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name


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
        Tournament, null=True, blank=True, on_delete=models.PROTECT, related_name="matches"
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
        ]
        indexes = [
            models.Index(fields=["status", "-id"], name="match_status_idx"),
            models.Index(fields=["ladder", "-id"], name="match_ladder_idx"),
            models.Index(fields=["tournament", "-id"], name="match_tournament_idx"),
        ]

    def __str__(self) -> str:
        return f"match {self.pk} ({self.status})"


class MatchSeat(models.Model):
    """One bot's seat in one match, with its outcome and rating before/after."""

    class Ended(models.TextChoices):
        """How the seat's game ended (docs/engine-api.md, Result); empty until then."""

        WON = "won"
        FINISHED = "finished"
        ELIMINATED = "eliminated"
        FORFEITED = "forfeited"

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats")
    seat = models.PositiveSmallIntegerField()
    # Indexed by the (bot, match) and (bot, result) indexes below.
    bot = models.ForeignKey(
        "bots.Bot", on_delete=models.PROTECT, related_name="seats", db_index=False
    )
    version = models.ForeignKey("bots.BotVersion", on_delete=models.PROTECT, related_name="seats")
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    score = models.IntegerField(null=True, blank=True, help_text="Loot points at the end.")
    faults = models.PositiveSmallIntegerField(default=0)
    ended = models.CharField(max_length=12, blank=True, choices=Ended.choices)
    forfeit_reason = models.CharField(max_length=200, blank=True)
    rating_before = models.IntegerField(null=True, blank=True)
    rating_after = models.IntegerField(null=True, blank=True)
    # Hosted seats: the bot's captured stdout+stderr (capped), for its owner and staff only.
    log = models.FileField(upload_to="logs/", blank=True, max_length=255)
    log_size = models.PositiveIntegerField(default=0)
    result = models.ForeignKey(
        "MatchResult",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="seats",
        db_index=False,
        help_text="Set when the result is recorded: its id orders a bot's rating history.",
    )

    class Meta:
        ordering = ["match", "seat"]
        constraints = [
            models.UniqueConstraint(fields=["match", "seat"], name="matchseat_match_seat_unique"),
            models.UniqueConstraint(fields=["match", "bot"], name="matchseat_match_bot_unique"),
        ]
        indexes = [
            # A bot's matches, newest first (keyset pagination by match id).
            models.Index(fields=["bot", "-match"], name="matchseat_bot_match_idx"),
            # A bot's rating history, latest first, in recording order.
            models.Index(
                fields=["bot", "-result"],
                name="matchseat_bot_result_idx",
                condition=Q(result__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"match {self.match_id} seat {self.seat}: {self.bot_id}"

    @property
    def rating_delta(self) -> int | None:
        if self.rating_before is None or self.rating_after is None:
            return None
        return self.rating_after - self.rating_before


class MatchResult(models.Model):
    """The single recorded result of a match; its id orders rating updates."""

    class Reason(models.TextChoices):
        """Why the game ended (docs/engine-api.md, Result)."""

        WON = "won"
        LAST_STANDING = "last_standing"
        CAVE_EXHAUSTED = "cave_exhausted"
        TURN_LIMIT = "turn_limit"

    match = models.OneToOneField(Match, on_delete=models.CASCADE, related_name="result")
    reason = models.CharField(max_length=20, choices=Reason.choices)
    winner = models.SmallIntegerField(help_text="Winning seat or -1.")
    turns = models.PositiveIntegerField(default=0)
    rounds = models.PositiveIntegerField(default=0)
    data = models.JSONField(help_text="The engine's Result dict, as recorded.")
    elo_k = models.FloatField(help_text="K used for this match (0 when unrated).")
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return f"result #{self.pk} of match {self.match_id}"
