"""One bot's seat in one match."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from ladder.matches.models.match import Match


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
