"""A bot's record against each opponent it met, kept as counters when results are recorded.

The bot page shows it for the opponents met most. Tallying it from the seats
at read time costs as much as the bot's whole history (a bot with 13,000
matches meant reading 40,000 seats per page view); the counters make the read
one index range of at most the rows shown. Two rows per pair of seats, one
from each side, so a bot's own rows answer for it.
"""

from __future__ import annotations

from django.db import models


class OpponentTally(models.Model):
    """``bot``'s recorded matches against ``opponent``: how many, and ahead/behind/level."""

    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
    opponent = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
    matches = models.PositiveIntegerField(default=0)
    ahead = models.PositiveIntegerField(default=0)
    behind = models.PositiveIntegerField(default=0)
    level = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["bot", "opponent"], name="opponenttally_pair_unique"),
        ]
        indexes = [
            # The bot page: its most-met opponents first, ties by opponent id.
            models.Index(fields=["bot", "-matches", "opponent"], name="opponenttally_bot_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} vs {self.opponent_id}: {self.matches}"
