"""A tournament's standings kept as counters when its results are recorded.

The tournament page and the standings reads used to score every seat of every
match of the tournament on each view (a 2,000-bot tournament: 6,000 seats read and
scored per view, growing with every match played). The counters make a view read
one row per bot and the pairs that meet on the same points (head-to-head), whatever
the number of matches played. Points are kept in halves, so they add up exactly.
"""

from __future__ import annotations

from django.db import models


class TournamentTally(models.Model):
    """``bot``'s counters in ``tournament``: what ``ladder.tournaments.standings`` scores
    from the matches (pairwise points in halves, played, first places, errored) and its
    Swiss byes (each worth a point)."""

    tournament = models.ForeignKey(
        "tournaments.Tournament", on_delete=models.CASCADE, related_name="+"
    )
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
    half_points = models.PositiveIntegerField(default=0)
    played = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    errored = models.PositiveIntegerField(default=0)
    byes = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "bot"], name="tournamenttally_bot_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tournament_id}: {self.bot_id} {self.half_points / 2:g}"


class TournamentPairTally(models.Model):
    """``bot``'s meetings with ``opponent`` in ``tournament`` and the pairwise points it
    scored against it (in halves): the head-to-head and Buchholz tie-breaks. Two rows
    per pair of seats, one from each side."""

    tournament = models.ForeignKey(
        "tournaments.Tournament", on_delete=models.CASCADE, related_name="+"
    )
    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
    opponent = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="+")
    meetings = models.PositiveIntegerField(default=0)
    half_points = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "bot", "opponent"], name="tournamentpairtally_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tournament_id}: {self.bot_id} vs {self.opponent_id}"
