"""Rating entries of a ladder: per bot, per version, per season, and the ledger of changes.

Everything here is in integer hundredths of a rating point (see
``ladder.ratings.systems``: every system reports a mean ``rating`` (mu) and an
uncertainty ``sigma`` on one scale around 1500). It sits in the lowest layer of
the ratings app: this module and ``services`` import nothing above
``ladder.ladders`` (the bot and its versions are named by app label), so the bot
and match services can create and move entries while the readers of the app
(leaderboards, history, ``rerate``, the export) read the matches above them.

- ``BotRating``: a bot's standing on a ladder in the current season, with two
  counters kept by the recording service, so no read aggregates over matches.
  Its table kept its name (``bots_botrating``) when the model moved here from
  ``ladder.bots``: the move changed Django's state, not the data.
- ``VersionRating``: the same for each version of the bot, seeded from the
  previous version's entry with a wider sigma, so an author sees whether v7
  rates above v6.
- ``Season``: the seasons of a ladder and the rating system it rates with; a
  season holds the results recorded after ``after_result`` (the recording
  order) until the next one starts.
- ``SeasonStanding``: a finished season's final table, online and official
  (the batch maximum-likelihood re-rating).
- ``RatingChange``: the ledger, one row per seat of every result recorded on a
  ladder: rating and sigma before and after (the bot page's history with its band).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from ladder.ratings.systems import system_name


def start_rating() -> int:
    """Where every entry starts (hundredths): ``LADDER_ELO_START``."""
    return settings.LADDER_ELO_START


class BotRating(models.Model):
    """A bot's standing on one ladder in its current season, written only when a result is
    recorded (and by ``rerate`` and a season's start).

    Every bot has one per configured ladder from its creation (``bot_create``);
    ``rerate --ladder KEY`` adds the missing ones when a ladder is configured later.
    ``score`` is the conservative rating the leaderboard ranks by: ``rating -
    LADDER_RATING_K_SIGMA * sigma``.
    """

    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="ratings")
    ladder = models.CharField(max_length=32, help_text="Key of the ladder (settings).")
    rating = models.IntegerField(default=start_rating, help_text="Mean (mu), hundredths.")
    sigma = models.IntegerField(default=0, help_text="Uncertainty (sigma), hundredths.")
    score = models.IntegerField(default=0, help_text="rating - k * sigma, what the board ranks by.")
    games = models.PositiveIntegerField(default=0, help_text="Rated games this season.")
    wins = models.PositiveIntegerField(default=0, help_text="Rated games ranked first.")

    class Meta:
        db_table = "bots_botrating"
        ordering = ["ladder", "-rating", "bot"]
        constraints = [
            models.UniqueConstraint(fields=["ladder", "bot"], name="botrating_ladder_bot_unique"),
        ]
        indexes = [
            # Opponents near a rating: one ladder by rating, ties by bot id.
            models.Index(fields=["ladder", "-rating", "bot"], name="botrating_board_idx"),
            # The leaderboard: one ladder by conservative rating, ties by bot id.
            models.Index(fields=["ladder", "-score", "bot"], name="botrating_score_idx"),
            # The leaderboard by games, most first (``sort=-games``: games, then score, then
            # bot id, as its ORDER BY): a page of it reads its rows, not a sort of the board.
            models.Index(fields=["ladder", "-games", "-score", "bot"], name="botrating_games_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.bot_id} on {self.ladder}: {self.rating}"


class VersionRating(models.Model):
    """One version's own standing on a ladder (all seasons), beside its bot's."""

    version = models.ForeignKey("bots.BotVersion", on_delete=models.CASCADE, related_name="ratings")
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="version_ratings")
    ladder = models.CharField(max_length=32)
    rating = models.IntegerField(help_text="Mean (mu), hundredths.")
    sigma = models.IntegerField(help_text="Uncertainty (sigma), hundredths.")
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["ladder", "version"], name="versionrating_ladder_version_unique"
            ),
        ]
        indexes = [models.Index(fields=["bot", "ladder"], name="versionrating_bot_idx")]


class Season(models.Model):
    """A season of one ladder: the system it rates with and where its results start."""

    ladder = models.CharField(max_length=32)
    number = models.PositiveIntegerField()
    system = models.CharField(max_length=24, help_text="Key in ladder.ratings.systems.")
    after_result = models.BigIntegerField(
        default=0, help_text="Its results are those recorded after this result id."
    )
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    shrink = models.FloatField(default=1.0, help_text="Soft reset at its start: kept share.")
    widen = models.IntegerField(default=0, help_text="Soft reset: sigma added in quadrature.")

    class Meta:
        ordering = ["ladder", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["ladder", "number"], name="season_ladder_number_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.ladder} season {self.number} ({self.system})"

    @property
    def system_name(self) -> str:
        """The system's name as the pages show it (``systems.SYSTEM_NAMES``)."""
        return system_name(self.system)


class SeasonStanding(models.Model):
    """A bot's final standing in a finished season: online, and official (batch ML)."""

    season = models.ForeignKey(Season, on_delete=models.CASCADE, related_name="standings")
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="season_standings")
    rating = models.IntegerField()
    sigma = models.IntegerField()
    score = models.IntegerField()
    games = models.PositiveIntegerField()
    wins = models.PositiveIntegerField()
    official_rating = models.IntegerField(help_text="Batch ML Plackett-Luce, Elo scale.")
    official_sigma = models.IntegerField()
    official_position = models.PositiveIntegerField()

    class Meta:
        ordering = ["season", "official_position"]
        constraints = [
            models.UniqueConstraint(fields=["season", "bot"], name="seasonstanding_unique"),
            # The table in its order (one bot a place): a page is a range of this index
            # (``SeasonTable``), not a sort of the season's every row and a join of every
            # row above it.
            models.UniqueConstraint(
                fields=["season", "official_position"], name="seasonstanding_position_unique"
            ),
        ]


class RatingChange(models.Model):
    """One seat of a result recorded on a ladder, as the rating saw it (the ledger).

    ``result_id`` and ``match_id`` are the match's (plain numbers: the ratings'
    entries sit below the matches); unrated results keep before = after.
    """

    ladder = models.CharField(max_length=32)
    season = models.PositiveIntegerField()
    result_id = models.BigIntegerField(help_text="Recording order.")
    match_id = models.BigIntegerField()
    seat = models.PositiveSmallIntegerField()
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="rating_changes")
    version = models.ForeignKey(
        "bots.BotVersion", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    rank = models.PositiveSmallIntegerField()
    rated = models.BooleanField()
    rating_before = models.IntegerField()
    sigma_before = models.IntegerField()
    rating_after = models.IntegerField()
    sigma_after = models.IntegerField()
    version_rating_after = models.IntegerField(null=True)
    recorded_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["result_id", "seat"], name="ratingchange_seat_unique"),
        ]
        indexes = [
            models.Index(fields=["bot", "ladder", "-result_id"], name="ratingchange_bot_idx"),
            models.Index(fields=["ladder", "result_id"], name="ratingchange_ladder_idx"),
        ]
