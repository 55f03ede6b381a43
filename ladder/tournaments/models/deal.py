"""A duplicate deal: one seed played once per seat rotation of one table."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from ladder.tournaments.models.comparison import VersionComparison
from ladder.tournaments.models.tournament import Tournament


class Deal(models.Model):
    """One dealt cave: a seed played by one table once per seat rotation.

    Its matches carry ``deal_rotation`` r: seat s holds table[(s - r) mod n]
    (``ladder.tournaments.rotations.rotations``), so every bot plays every seat of
    the same cave and its result over the set measures the bot, not the deal.
    """

    class Side(models.TextChoices):
        OLD = "old"
        NEW = "new"

    seed = models.BigIntegerField()
    seats = models.PositiveSmallIntegerField(help_text="Table size = number of rotations.")
    tournament = models.ForeignKey(
        Tournament, null=True, blank=True, on_delete=models.CASCADE, related_name="deals"
    )
    comparison = models.ForeignKey(
        VersionComparison,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="deal_set",
    )
    comparison_index = models.PositiveSmallIntegerField(null=True, blank=True)
    comparison_side = models.CharField(max_length=3, blank=True, choices=Side.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "matches_deal"  # created by the matches app; moved here with its rows
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(condition=Q(seed__gte=0), name="deal_seed_nonnegative"),
            models.UniqueConstraint(
                fields=["comparison", "comparison_index", "comparison_side"],
                name="deal_comparison_unique",
                condition=Q(comparison__isnull=False),
            ),
        ]

    def __str__(self) -> str:
        return f"deal {self.pk}"
