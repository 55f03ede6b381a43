"""The one recorded result of a match."""

from __future__ import annotations

from django.db import models

from ladder.matches.models.match import Match


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
