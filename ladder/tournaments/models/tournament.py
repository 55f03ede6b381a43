"""A tournament and its Swiss byes."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Tournament(models.Model):
    """A round robin or Swiss tournament between its participants (``ladder.tournaments``).

    Created pending; ``tournament_start`` schedules its matches (all of a round
    robin, the first round of a Swiss) and makes it running; it is finished when
    its last match is closed and no round is left. Its matches are unrated
    unless ``rated``, and are played before ladder matches (``Match.priority``).
    """

    class Format(models.TextChoices):
        ROUND_ROBIN = "round_robin", "round robin"
        SWISS = "swiss", "swiss"

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        FINISHED = "finished"

    name = models.CharField(max_length=100, unique=True)
    format = models.CharField(max_length=16, choices=Format.choices, default=Format.ROUND_ROBIN)
    participants = models.ManyToManyField(
        "bots.Bot",
        related_name="tournaments",
        blank=True,
        db_table="matches_tournament_participants",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    rated = models.BooleanField(
        default=False, help_text="Whether its matches change ladder ratings (default: no)."
    )
    seats = models.PositiveSmallIntegerField(
        default=2, help_text="Seats per match (Swiss: 2 only)."
    )
    duplicate = models.BooleanField(
        default=False,
        help_text="Play each table as a duplicate deal: one seed, every seat rotation.",
    )
    rounds = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Swiss: rounds to play (default: ceil(log2 n))."
    )
    ladder = models.CharField(
        max_length=32, blank=True, help_text="Ladder key whose game it plays (default: default)."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "matches_tournament"  # created by the matches app; moved here with its rows
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name


class TournamentBye(models.Model):
    """A Swiss round's bye: the odd participant out, who scores a win without playing."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="byes")
    round = models.PositiveSmallIntegerField()
    bot = models.ForeignKey("bots.Bot", on_delete=models.PROTECT, related_name="+")

    class Meta:
        db_table = "matches_tournamentbye"
        ordering = ["tournament", "round"]
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "round"], name="tournamentbye_one_per_round"
            )
        ]
