"""Writes of rating entries: create them, and move them when a result is recorded.

``match_record_result`` (``ladder.matches.services``) is the one caller of
``rating_entries_lock`` and ``ratings_apply``, inside its recording transaction:
it locks the match, then the seated bots' entries here (by bot id, the one lock
order every writer uses, so concurrent recordings never deadlock on PostgreSQL),
allocates the result, and applies the change. The update is the pure
``ladder.ratings.elo`` function, the same one ``rerate``
(``ladder.ratings.recompute``) replays. This module imports nothing above
``ladder.ladders``: bots and matches sit above it and call it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ladder.ratings import elo
from ladder.ratings.models import BotRating


@dataclass(frozen=True)
class SeatRating:
    """One seat's rating before and after a recorded result (hundredths)."""

    before: int
    after: int


def bot_ratings_ensure(*, bot_ids: Sequence[int], ladder_keys: Sequence[str]) -> None:
    """Give each bot a rating entry (start rating, no games) on each ladder where it has none.

    Idempotent and safe to run concurrently (conflicts are ignored); the
    recording service calls it before locking entries, ``rerate`` for a new ladder.
    """
    BotRating.objects.bulk_create(
        (BotRating(bot_id=b, ladder=key) for key in ladder_keys for b in sorted(bot_ids)),
        ignore_conflicts=True,
        batch_size=1000,
    )


def rating_entries_lock(*, ladder: str, bot_ids: Sequence[int]) -> dict[int, BotRating]:
    """Lock the bots' entries on ``ladder`` in bot-id order (inside the caller's transaction).

    An off-ladder match (``ladder`` empty) has no entries: an empty mapping.
    """
    if not ladder:
        return {}
    return {
        e.bot_id: e
        for e in BotRating.objects.select_for_update()
        .filter(ladder=ladder, bot_id__in=list(bot_ids))
        .order_by("bot_id")
    }


def ratings_apply(
    *,
    entries: Mapping[int, BotRating],
    bot_ids: Sequence[int],
    ranks: Sequence[int],
    k: float,
) -> list[SeatRating] | None:
    """Rate one recorded result: move and save the locked ``entries``; each seat's change.

    ``bot_ids`` and ``ranks`` are in seat order. ``k == 0`` means unrated: before
    equals after and no game is counted. Seats of an off-ladder match (no
    entries) keep no rating: None.
    """
    if not entries:
        return None
    before = [entries[b].rating for b in bot_ids]
    deltas = elo.rate(before, ranks, k) if k > 0 else [0] * len(bot_ids)
    if k > 0:
        for bot_id, rank, rating, delta in zip(bot_ids, ranks, before, deltas, strict=True):
            entry = entries[bot_id]
            entry.rating = rating + delta
            entry.games += 1
            entry.wins += rank == 1
        BotRating.objects.bulk_update(list(entries.values()), ["rating", "games", "wins"])
    return [SeatRating(r, r + d) for r, d in zip(before, deltas, strict=True)]
