"""Recomputing a ladder's ratings from its history, to check or to rewrite them.

Ratings are written once, when ``match_record_result`` (``ladder.matches.services``)
calls ``ladder.ratings.services``, from the pure ``elo`` module. Here the same
function replays a ladder's recorded results in recording order
(``MatchResult.id``) from the start rating:
``ratings_recompute`` compares with what is stored, ``ratings_rewrite`` writes
the recomputed values. Both stream plain values from the database (never one
model object per seat), so memory grows with the number of bots, not matches.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import itemgetter

from django.conf import settings
from django.db import transaction

from ladder.bots.models import Bot
from ladder.ladders import ladder_get
from ladder.matches.models import MatchSeat
from ladder.ratings import elo
from ladder.ratings.models import BotRating
from ladder.ratings.services import bot_ratings_ensure

MAX_LISTED = 1000
"""Mismatches listed in full; the rest are counted."""
CHUNK = 5000
WRITE_BATCH = 1000
REPLAY_FIELDS = (
    "result_id", "pk", "match_id", "seat", "bot_id", "rank", "rating_before", "rating_after",
    "result__elo_k",
)  # fmt: skip


@dataclass(frozen=True)
class ReratedSeat:
    """One rated seat as stored and as recomputed."""

    seat_id: int
    match_id: int
    seat: int
    bot_id: int
    stored: tuple[int | None, int | None]
    computed: tuple[int, int]


@dataclass(frozen=True)
class RatingState:
    rating: int
    games: int
    wins: int


@dataclass
class Recomputed:
    """Outcome of a replay of one ladder's history."""

    ladder: str
    matches: int = 0
    mismatch_count: int = 0
    mismatches: list[str] = field(default_factory=list)
    standings: dict[int, RatingState] = field(default_factory=dict)

    def mismatch(self, line: str) -> None:
        self.mismatch_count += 1
        if len(self.mismatches) < MAX_LISTED:
            self.mismatches.append(line)


def rerate_history(ladder: str, standings: dict[int, RatingState]) -> Iterator[ReratedSeat]:
    """Every recorded seat of ``ladder`` in recording order, rated again from the start.

    ``standings`` (bot id -> rating, games, wins) starts empty and is left at the
    end of the history; the caller compares or writes. Unrated results (K 0)
    keep before = after and count no game, exactly as the recording does.
    """
    start = settings.LADDER_ELO_START
    rows = (
        MatchSeat.objects.filter(match__ladder=ladder, result__isnull=False)
        .order_by("result_id", "seat")
        .values_list(*REPLAY_FIELDS)
        .iterator(chunk_size=CHUNK)
    )
    for _, group in itertools.groupby(rows, key=itemgetter(0)):
        seats = list(group)
        k = seats[0][8]
        now = [standings.get(row[4]) or RatingState(start, 0, 0) for row in seats]
        ranks = [row[5] or 0 for row in seats]
        rated = k > 0 and len(seats) >= 2
        deltas = elo.rate([s.rating for s in now], ranks, k) if rated else [0] * len(seats)
        for row, was, rank, delta in zip(seats, now, ranks, deltas, strict=True):
            _, pk, match_id, seat, bot_id, _, before, after, _ = row
            if rated:
                standings[bot_id] = RatingState(
                    was.rating + delta, was.games + 1, was.wins + (rank == 1)
                )
            yield ReratedSeat(
                pk, match_id, seat, bot_id, (before, after), (was.rating, was.rating + delta)
            )


def _compare_entries(rec: Recomputed) -> list[BotRating]:
    """Entries whose stored values differ from the recomputed ones (changed in memory)."""
    start = RatingState(settings.LADDER_ELO_START, 0, 0)
    names = dict(Bot.objects.values_list("pk", "name"))
    changed = []
    for entry in BotRating.objects.filter(ladder=rec.ladder).only(
        "pk", "bot_id", "rating", "games", "wins"
    ):
        want = rec.standings.get(entry.bot_id, start)
        if (entry.rating, entry.games, entry.wins) != (want.rating, want.games, want.wins):
            rec.mismatch(
                f"bot {names.get(entry.bot_id, entry.bot_id)}: stored rating {entry.rating}"
                f" games {entry.games} wins {entry.wins}, recomputed rating {want.rating}"
                f" games {want.games} wins {want.wins}"
            )
            entry.rating, entry.games, entry.wins = want.rating, want.games, want.wins
            changed.append(entry)
    return changed


def _rerate(ladder: str, *, write: bool) -> Recomputed:
    """Replay ``ladder``; with ``write``, store the recomputed value of every differing seat."""
    rec = Recomputed(ladder=ladder)
    names: dict[int, str] | None = None
    pending: list[MatchSeat] = []
    last_match = None
    for seat in rerate_history(ladder, rec.standings):
        if seat.match_id != last_match:
            rec.matches += 1
            last_match = seat.match_id
        if seat.stored == seat.computed:
            continue
        names = names if names is not None else dict(Bot.objects.values_list("pk", "name"))
        rec.mismatch(
            f"match {seat.match_id} seat {seat.seat} ({names.get(seat.bot_id)}):"
            f" stored {seat.stored[0]}->{seat.stored[1]},"
            f" recomputed {seat.computed[0]}->{seat.computed[1]}"
        )
        if write:
            before, after = seat.computed
            pending.append(MatchSeat(pk=seat.seat_id, rating_before=before, rating_after=after))
            if len(pending) >= WRITE_BATCH:
                MatchSeat.objects.bulk_update(pending, ["rating_before", "rating_after"])
                pending.clear()
    if pending:
        MatchSeat.objects.bulk_update(pending, ["rating_before", "rating_after"])
    return rec


def ratings_recompute(*, ladder: str | None = None) -> Recomputed:
    """Replay one ladder (default: the default ladder); list every stored value that differs."""
    rec = _rerate(ladder_get(ladder).key, write=False)
    _compare_entries(rec)
    return rec


def ratings_rewrite(*, ladder: str | None = None) -> Recomputed:
    """Recompute one ladder and write every differing seat and entry.

    First every bot gets an entry on the ladder (what a newly configured ladder
    needs), then the ladder's entries are locked (by bot id, the recording
    service's order) for the replay and the writes.
    """
    key = ladder_get(ladder).key
    bot_ratings_ensure(bot_ids=list(Bot.objects.values_list("pk", flat=True)), ladder_keys=[key])
    with transaction.atomic():
        list(
            BotRating.objects.select_for_update()
            .filter(ladder=key)
            .order_by("bot_id")
            .values_list("pk", flat=True)
        )
        rec = _rerate(key, write=True)
        BotRating.objects.bulk_update(
            _compare_entries(rec), ["rating", "games", "wins"], batch_size=WRITE_BATCH
        )
    return rec
