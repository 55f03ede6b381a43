"""Read side of tournaments and version comparisons.

A comparison's answer is computed from its matches whenever it is read
(``ladder.matchmaking.comparison``): nothing is stored that the matches do not
already say, so it is reproducible and never stale.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from ladder.accounts.models import User
from ladder.common.exceptions import NotFound, PermissionDenied
from ladder.matches.models import Match, MatchSeat, VersionComparison
from ladder.matches.services import OPEN_STATES
from ladder.matchmaking.comparison import Comparison, DealRanks, compare


@dataclass(frozen=True)
class ComparisonReport:
    """Where a comparison stands and, from two complete deals on, its answer."""

    comparison: VersionComparison
    matches: int
    open: int  # queued or running
    errored: int  # errored or cancelled: their deals do not count
    complete_deals: int  # deals whose every rotation finished for both versions
    result: Comparison | None

    @property
    def status(self) -> str:
        return "running" if self.open else "finished"

    @property
    def summary(self) -> str:
        old = f"v{self.comparison.old_version.number}"
        new = f"v{self.comparison.new_version.number}"
        if self.result is None:
            return (
                f"{new} - {old}: {self.complete_deals} complete deals so far; "
                "an answer needs at least 2"
            )
        return self.result.summary(old, new)


def comparison_list(*, user: User) -> QuerySet[VersionComparison]:
    """The user's comparisons (staff: everyone's), newest first."""
    qs = VersionComparison.objects.select_related("bot", "old_version", "new_version")
    return (qs if user.is_staff else qs.filter(bot__owner=user)).order_by("-id")


def comparison_get(*, comparison_id: int, user: User) -> ComparisonReport:
    """A comparison of one of the user's bots (staff: any) with its answer so far."""
    comparison = comparison_list(user=user).filter(pk=comparison_id).first()
    if comparison is None:
        if VersionComparison.objects.filter(pk=comparison_id).exists():
            raise PermissionDenied("only the bot's owner sees its comparisons")
        raise NotFound("no such comparison")
    return comparison_report(comparison)


def comparison_report(comparison: VersionComparison) -> ComparisonReport:
    """The answer over the deals complete on both sides, in deal order (one query)."""
    rows = MatchSeat.objects.filter(
        match__deal__comparison=comparison, bot_id=comparison.bot_id
    ).values_list(
        "match__deal__comparison_index",
        "match__deal__comparison_side",
        "match__deal__seats",
        "match__status",
        "rank",
    )
    ranks: dict[tuple[int, str], list[int]] = {}
    broken: set[int] = set()
    seats_of: dict[int, int] = {}
    total = open_ = errored = 0
    for index, side, seats, status, rank in rows:
        total += 1
        if index is None:  # a comparison's deals always have an index (constraint)
            continue
        seats_of[index] = seats
        if status in OPEN_STATES:
            open_ += 1
            broken.add(index)
        elif status != Match.Status.FINISHED or rank is None:
            errored += 1
            broken.add(index)
        else:
            ranks.setdefault((index, side), []).append(rank)
    complete = [
        i
        for i in sorted(seats_of)
        if i not in broken
        and all(len(ranks.get((i, side), [])) == seats_of[i] for side in ("old", "new"))
    ]
    result = None
    if len(complete) >= 2:
        result = compare(
            [DealRanks(ranks[(i, "old")]) for i in complete],
            [DealRanks(ranks[(i, "new")]) for i in complete],
        )
    return ComparisonReport(
        comparison=comparison,
        matches=total,
        open=open_,
        errored=errored,
        complete_deals=len(complete),
        result=result,
    )


@dataclass(frozen=True)
class RotationCell:
    """One match of a comparison: its rotation, where it stands, the compared bot's rank."""

    match_id: int
    rotation: int
    status: str
    rank: int | None


@dataclass(frozen=True)
class ComparisonDeal:
    """One deal of a comparison: the same cave and opponents, each version in every rotation."""

    index: int
    seed: int
    seats: int
    old: list[RotationCell]
    new: list[RotationCell]


def comparison_deals(comparison: VersionComparison) -> list[ComparisonDeal]:
    """Every deal's matches side by side, old and new version, in rotation order (one query)."""
    rows = (
        MatchSeat.objects.filter(match__deal__comparison=comparison, bot_id=comparison.bot_id)
        .values_list(
            "match_id",
            "match__deal_rotation",
            "match__status",
            "rank",
            "match__deal__comparison_index",
            "match__deal__comparison_side",
            "match__deal__seed",
            "match__deal__seats",
        )
        .order_by("match__deal__comparison_index", "match__deal_rotation")
    )
    deals: dict[int, ComparisonDeal] = {}
    for match_id, rotation, status, rank, index, side, seed, seats in rows:
        if index is None:  # a comparison's deals always have an index (constraint)
            continue
        deal = deals.setdefault(index, ComparisonDeal(index, seed, seats, [], []))
        cell = RotationCell(match_id, rotation or 0, status, rank)
        (deal.new if side == "new" else deal.old).append(cell)
    return [deals[i] for i in sorted(deals)]
