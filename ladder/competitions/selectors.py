"""Reads of competitions: the list, one competition, its entries (a page at a time).

A competition page costs the same however long the ladder's history is: the
competition's row holds its phase, the final's live view and its result (written
by the final's steps, ``ladder.competitions.services``), and its entries are read
a page at a time through ``competitionentry`` indexes, never from the matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Count, Q, QuerySet

from ladder.accounts.models import User
from ladder.common.exceptions import NotFound
from ladder.competitions.models import Competition, CompetitionEntry, CompetitionInvitation


def competition_list(*, user: User | None = None, private: bool = False) -> QuerySet[Competition]:
    """Public competitions (newest final first) with their entry counts; with ``private``,
    the private tournaments ``user`` created or has a bot in."""
    qs = Competition.objects.annotate(entry_count=Count("entries")).order_by(
        "-final_starts_at", "-id"
    )
    if not private:
        return qs.filter(private=False)
    if user is None or not user.is_authenticated:
        return qs.none()
    return qs.filter(Q(created_by=user) | Q(entries__owner=user), private=True).distinct()


def competition_get(*, competition_id: int) -> Competition:
    competition = (
        Competition.objects.annotate(entry_count=Count("entries")).filter(pk=competition_id).first()
    )
    if competition is None:
        raise NotFound("no such competition")
    return competition


def competition_entries(*, competition: Competition) -> QuerySet[CompetitionEntry]:
    """Entries by final place, then seed, then entry order, with bot, owner and version."""
    return (
        CompetitionEntry.objects.filter(competition=competition)
        .select_related("bot", "owner", "version")
        .order_by("place", "seed", "entered_at", "pk")
    )


def invitations_for(*, user: User) -> QuerySet[CompetitionInvitation]:
    """Private-tournament invitations of ``user``'s bots still waiting for an answer."""
    return (
        CompetitionInvitation.objects.filter(user=user, bot__isnull=False, accepted_at__isnull=True)
        .select_related("competition", "bot")
        .order_by("-created_at")
    )


@dataclass(frozen=True)
class PhaseLine:
    """One phase of a competition with its date, for pages."""

    phase: str
    at: datetime | None
    current: bool
    done: bool


def competition_phases(competition: Competition) -> list[PhaseLine]:
    """Entry opens, submissions freeze, the final starts, finished: dates and where it is."""
    order = [p.value for p in Competition.Phase]
    at: dict[str, datetime | None] = {
        Competition.Phase.ENTRY: competition.entry_opens_at,
        Competition.Phase.FROZEN: competition.freeze_at,
        Competition.Phase.FINAL: competition.final_starts_at,
        Competition.Phase.FINISHED: competition.finished_at,
    }
    now = order.index(competition.phase)
    return [
        PhaseLine(phase=p, at=at[p], current=p == competition.phase, done=order.index(p) < now)
        for p in order[1:]
    ]


def bot_names(competition: Competition) -> dict[int, str]:
    """Names of the finalists (the final's view and result hold their ids): at most
    ``final_size`` rows, however many entered."""
    return dict(competition.entries.filter(finalist=True).values_list("bot_id", "bot__name"))


def result_rows(
    competition: Competition, names: dict[int, str] | None = None
) -> dict[str, Any] | None:
    """The final's result with bot names beside the ids (None before the end)."""
    if not competition.result:
        return None
    names = bot_names(competition) if names is None else names
    # A final that never ran (too few finalists) has no figures: its result reads as empty.
    result = {"settled_places": 0, "games": 0, "capped": False, **competition.result}
    result["places"] = [{**p, "bot_name": names.get(p["bot"], "?")} for p in result["places"]]
    result["coin_tosses"] = [
        {"a": a, "b": b, "a_name": names.get(a, "?"), "b_name": names.get(b, "?"), "p": p}
        for a, b, p in result.get("coin_tosses", [])
    ]
    result["pairwise"] = [
        {**row, "a_name": names.get(row["a"], "?"), "b_name": names.get(row["b"], "?")}
        for row in result.get("pairwise", [])
    ]
    return result
