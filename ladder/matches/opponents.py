"""Each bot's record against each opponent: counted with every recorded result.

Written inside the recording transaction (``match_record_result``), so the
counters agree with the recorded seats exactly as the ratings do: a result is
counted once or not at all. ``opponent_tallies_from_seats`` recomputes them
from the seats (the migration that introduced them, and the tests' check).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

from django.db import connections, router

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
    error), then each pair's row is incremented by a plain ``UPDATE`` of its own,
    sent in (bot, opponent) order in one ``executemany``: each locks its row as it
    runs, so two recordings that share a pair lock its rows in the same order. Two
    calls for any number of seats (one per pair cost a 4-seat match twelve); the
    ORM's locked read and ``CASE`` update that did this before cost more to build
    than to run.
    """
    pairs = _pairs(bot_ids, ranks)
    OpponentTally.objects.bulk_create(
        [OpponentTally(bot_id=bot, opponent_id=opponent) for bot, opponent, _ in pairs],
        ignore_conflicts=True,
    )
    connection = connections[router.db_for_write(OpponentTally)]
    with connection.cursor() as cursor:
        cursor.executemany(
            _increment_sql(connection.vendor),
            [[int(o == "ahead"), int(o == "behind"), int(o == "level"), bot, opponent]
             for bot, opponent, o in pairs],
        )  # fmt: skip


@cache
def _increment_sql(vendor: str) -> str:
    quote = connections[router.db_for_write(OpponentTally)].ops.quote_name
    meta = OpponentTally._meta
    fields: dict[str, Any] = {
        name: meta.get_field(name) for name in ("matches", "bot", "opponent", *_OUTCOME)
    }
    column = {name: quote(field.column) for name, field in fields.items()}
    counted = ", ".join(f"{column[o]} = {column[o]} + %s" for o in _OUTCOME)
    return (
        f"UPDATE {quote(meta.db_table)} SET {column['matches']} = {column['matches']} + 1, "
        f"{counted} WHERE {column['bot']} = %s AND {column['opponent']} = %s"
    )


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
