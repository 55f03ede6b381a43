"""A bot's rating entry on one ladder.

The entry holds the rating (integer hundredths, see ``ladder.ratings.elo``) and
two counters kept by the recording service (``ladder.ratings.services``), so no
read aggregates over matches; the history lives on the MatchSeat rows. It sits
in the lowest layer of the ratings app (this module and ``services`` import
nothing above ``ladder.ladders``; the bot is named by its app label), so the bot
and match services can create and move entries while the readers of the app
(leaderboards, history, ``rerate``) read the matches above them.

The table kept its name (``bots_botrating``) when the model moved here from
``ladder.bots``: the move changed Django's state, not the data.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


def start_rating() -> int:
    """Where every entry starts (hundredths): ``LADDER_ELO_START``."""
    return settings.LADDER_ELO_START


class BotRating(models.Model):
    """A bot's standing on one ladder: rating and counters, written only when a result is recorded.

    Every bot has one per configured ladder from its creation (``bot_create``);
    ``rerate --ladder KEY`` adds the missing ones when a ladder is configured later.
    """

    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="ratings")
    ladder = models.CharField(max_length=32, help_text="Key of the ladder (settings).")
    rating = models.IntegerField(default=start_rating, help_text="Hundredths of an Elo point.")
    games = models.PositiveIntegerField(default=0, help_text="Rated games on this ladder.")
    wins = models.PositiveIntegerField(default=0, help_text="Rated games ranked first.")

    class Meta:
        db_table = "bots_botrating"
        ordering = ["ladder", "-rating", "bot"]
        constraints = [
            models.UniqueConstraint(fields=["ladder", "bot"], name="botrating_ladder_bot_unique"),
        ]
        # The leaderboard: one ladder by rating, ties by bot id.
        indexes = [models.Index(fields=["ladder", "-rating", "bot"], name="botrating_board_idx")]

    def __str__(self) -> str:
        return f"{self.bot_id} on {self.ladder}: {self.rating}"
