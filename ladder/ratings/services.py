"""Rating writes and the recomputation from history.

``ratings_apply`` runs inside ``match_record_result``'s transaction with the bot
rows already locked; it is the only code that changes ``Bot.rating``.
``ratings_recompute`` replays every recorded rated match in recording order
(``MatchResult.id``) from the start rating and compares with what is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction

from ladder.bots.models import Bot
from ladder.matches.models import MatchResult, MatchSeat
from ladder.ratings import elo


def ratings_apply(
    *, seats: Sequence[MatchSeat], bots: dict[int, Bot], ranks: Sequence[int], k: float
) -> None:
    """Set rating_before/after on ``seats`` and move the locked ``bots``' ratings.

    ``k == 0`` means unrated: before equals after and games are not counted.
    The caller saves seats and bots.
    """
    before = [bots[s.bot_id].rating for s in seats]
    deltas = elo.rate(before, ranks, k) if k > 0 else [0] * len(seats)
    for seat, rating, delta in zip(seats, before, deltas, strict=True):
        bot = bots[seat.bot_id]
        seat.rating_before = rating
        seat.rating_after = rating + delta
        bot.rating = rating + delta
        if k > 0:
            bot.games += 1


@dataclass
class Recomputed:
    """Outcome of a replay of all ratings from history."""

    matches: int = 0
    mismatches: list[str] = field(default_factory=list)
    ratings: dict[int, int] = field(default_factory=dict)
    games: dict[int, int] = field(default_factory=dict)


def ratings_recompute() -> Recomputed:
    """Replay rated results in recording order; list every stored value that differs."""
    start = settings.LADDER_ELO_START
    out = Recomputed()
    bots = {b.pk: b for b in Bot.objects.only("pk", "name", "rating", "games")}
    ratings = {pk: start for pk in bots}
    games = dict.fromkeys(bots, 0)
    seats_by_match: dict[int, list[MatchSeat]] = {}
    for seat in MatchSeat.objects.filter(match__result__isnull=False).order_by("match_id", "seat"):
        seats_by_match.setdefault(seat.match_id, []).append(seat)
    for res in MatchResult.objects.order_by("id").only("id", "match_id", "elo_k"):
        seats = seats_by_match.get(res.match_id, [])
        out.matches += 1
        before = [ratings[s.bot_id] for s in seats]
        ranks = [s.rank or 0 for s in seats]
        if res.elo_k > 0 and len(seats) >= 2:
            deltas = elo.rate(before, ranks, res.elo_k)
        else:
            deltas = [0] * len(seats)
        for seat, rb, d in zip(seats, before, deltas, strict=True):
            ra = rb + d
            if seat.rating_before != rb or seat.rating_after != ra:
                out.mismatches.append(
                    f"match {res.match_id} seat {seat.seat} ({bots[seat.bot_id].name}):"
                    f" stored {seat.rating_before}->{seat.rating_after},"
                    f" recomputed {rb}->{ra}"
                )
            ratings[seat.bot_id] = ra
            if res.elo_k > 0:
                games[seat.bot_id] += 1
    for pk, bot in bots.items():
        if bot.rating != ratings[pk] or bot.games != games[pk]:
            out.mismatches.append(
                f"bot {bot.name}: stored rating {bot.rating} games {bot.games},"
                f" recomputed rating {ratings[pk]} games {games[pk]}"
            )
    out.ratings, out.games = ratings, games
    return out


@transaction.atomic
def ratings_rewrite() -> Recomputed:
    """Recompute and write every seat and bot rating (all bot rows locked, by pk)."""
    list(Bot.objects.select_for_update().order_by("pk").values_list("pk", flat=True))
    rec = ratings_recompute()
    if not rec.mismatches:
        return rec
    ratings = {pk: settings.LADDER_ELO_START for pk in rec.ratings}
    seats_by_match: dict[int, list[MatchSeat]] = {}
    for seat in MatchSeat.objects.filter(match__result__isnull=False).order_by("match_id", "seat"):
        seats_by_match.setdefault(seat.match_id, []).append(seat)
    changed: list[MatchSeat] = []
    for res in MatchResult.objects.order_by("id").only("id", "match_id", "elo_k"):
        seats = seats_by_match.get(res.match_id, [])
        before = [ratings[s.bot_id] for s in seats]
        ranks = [s.rank or 0 for s in seats]
        ok = res.elo_k > 0 and len(seats) >= 2
        deltas = elo.rate(before, ranks, res.elo_k) if ok else [0] * len(seats)
        for seat, rb, d in zip(seats, before, deltas, strict=True):
            seat.rating_before, seat.rating_after = rb, rb + d
            ratings[seat.bot_id] = rb + d
            changed.append(seat)
    MatchSeat.objects.bulk_update(changed, ["rating_before", "rating_after"], batch_size=500)
    for pk, rating in rec.ratings.items():
        Bot.objects.filter(pk=pk).update(rating=rating, games=rec.games[pk])
    return rec
