"""An owner's version comparison: two versions of one bot over the same deals."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class VersionComparison(models.Model):
    """An owner's question "is ``new_version`` better than ``old_version``?".

    Each of ``deals`` seeds is dealt twice, once with each version against the
    same opponents, every seat rotation (``Deal.comparison_side``); the answer
    is paired statistics over the deals (``ladder.tournaments.comparison``),
    computed from the matches whenever it is read. Unrated.
    """

    bot = models.ForeignKey("bots.Bot", on_delete=models.CASCADE, related_name="comparisons")
    old_version = models.ForeignKey("bots.BotVersion", on_delete=models.PROTECT, related_name="+")
    new_version = models.ForeignKey("bots.BotVersion", on_delete=models.PROTECT, related_name="+")
    opponents = models.ManyToManyField(
        "bots.Bot", related_name="+", db_table="matches_versioncomparison_opponents"
    )
    deals = models.PositiveSmallIntegerField()
    ladder = models.CharField(max_length=32, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "matches_versioncomparison"  # created by the matches app; moved with its rows
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"comparison {self.pk}"
