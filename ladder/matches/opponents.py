"""Each bot's record against each opponent: counted with every recorded result.

Written inside the recording transaction (``match_record_result``), so the
counters agree with the recorded seats exactly as the ratings do: a result is
counted once or not at all. ``opponent_tallies_from_seats`` recomputes them
from the seats (the migration that introduced them, and the tests' check).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from django.db.models import Case, F, IntegerField, Q, Value, When

from ladder.matches.models import OpponentTally

_OUTCOME = ("ahead", "behind", "level")


def _pairs(bot_ids: Sequence[int], ranks: Sequence[int]) -> list[tuple[int, int, str]]:
    """(bot, opponent, "ahead" | "behind" | "level") for every ordered pair of seats."""
    pairs = []
    for i, (bot, mine) in enumerate(zip(bot_ids, ranks, strict=True)):
        for j, (opponent, theirs) in enumerate(zip(bot_ids, ranks, strict=True)):
            if i != j:
                outcome = "ahead" if mine < theirs else "behind" if mine > theirs else "level"
                pairs.append((bot, opponent, outcome))
    return sorted(pairs)


def opponent_tallies_add(*, bot_ids: Sequence[int], ranks: Sequence[int]) -> None:
    """Count one recorded match (call inside the recording transaction).

    Missing rows are made first (a conflict with a concurrent recording is no
    error), then locked in (bot, opponent) order, so two recordings that share a
    pair lock its rows in the same order, and incremented by one UPDATE: three
    statements for any number of seats, where one per pair cost a 4-seat match twelve.
    """
    pairs = _pairs(bot_ids, ranks)
    OpponentTally.objects.bulk_create(
        [OpponentTally(bot_id=bot, opponent_id=opponent) for bot, opponent, _ in pairs],
        ignore_conflicts=True,
    )
    which = Q()
    for bot, opponent, _ in pairs:
        which |= Q(bot_id=bot, opponent_id=opponent)
    rows = OpponentTally.objects.filter(which)
    ids = {
        (bot, opponent): pk
        for pk, bot, opponent in rows.select_for_update()
        .order_by("bot_id", "opponent_id")
        .values_list("pk", "bot_id", "opponent_id")
    }
    won = {outcome: [ids[bot, opponent] for bot, opponent, o in pairs if o == outcome]
           for outcome in _OUTCOME}  # fmt: skip
    OpponentTally.objects.filter(pk__in=list(ids.values())).update(
        matches=F("matches") + 1,
        **{
            outcome: F(outcome)
            + Case(When(pk__in=won[outcome], then=Value(1)), default=Value(0),
                   output_field=IntegerField())
            for outcome in _OUTCOME
        },
    )  # fmt: skip


def opponent_tallies_from_seats(
    seats: Iterable[tuple[int, int, int]],
) -> dict[tuple[int, int], dict[str, int]]:
    """The counters from scratch: ``seats`` are (match id, bot id, rank) of recorded seats."""
    by_match: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for match_id, bot, rank in seats:
        by_match[match_id].append((bot, rank))
    tally: dict[tuple[int, int], dict[str, int]] = {}
    for seated in by_match.values():
        bots, ranks = [b for b, _ in seated], [r for _, r in seated]
        for bot, opponent, outcome in _pairs(bots, ranks):
            line = tally.setdefault((bot, opponent), dict.fromkeys(("matches", *_OUTCOME), 0))
            line["matches"] += 1
            line[outcome] += 1
    return tally
