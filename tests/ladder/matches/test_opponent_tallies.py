"""Each bot's record against each opponent is kept as counters when results are recorded,
and always equals the count from the recorded seats (what the bot page used to tally)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ladder.matches.creation import match_create
from ladder.matches.models import MatchSeat, OpponentTally
from ladder.matches.opponents import opponent_tallies_from_seats
from ladder.matches.selectors import bot_opponent_records
from ladder.matches.spec import MatchSpec
from tests.ladder.conftest import record

pytestmark = pytest.mark.django_db


def counted() -> dict[tuple[int, int], dict[str, int]]:
    return {
        (row.bot_id, row.opponent_id): {
            "matches": row.matches, "ahead": row.ahead, "behind": row.behind, "level": row.level
        }
        for row in OpponentTally.objects.all()
    }  # fmt: skip


def from_seats() -> dict[tuple[int, int], dict[str, int]]:
    seats = MatchSeat.objects.filter(rank__isnull=False).values_list("match_id", "bot_id", "rank")
    return opponent_tallies_from_seats(seats)


def play(bots: list[Any], rng: random.Random, n: int) -> None:
    for _ in range(n):
        seated = rng.sample(bots, rng.randint(2, 4))
        match = match_create(MatchSpec(bot_ids=[b.pk for b in seated]))
        record(match, [rng.randint(1, len(seated)) for _ in seated])  # ties included


def test_counters_equal_the_recorded_seats(make_user: Any, make_bot: Any) -> None:
    owners = [make_user(f"owner{i}") for i in range(6)]
    bots = [make_bot(owner, f"bot-{i}") for i, owner in enumerate(owners)]
    play(bots, random.Random(7), 40)
    assert counted() == from_seats()
    # Unplayed and unrecorded matches count nothing; a second record of one changes nothing.
    match = match_create(MatchSpec(bot_ids=[bots[0].pk, bots[1].pk]))
    before = counted()
    record(match, [1, 2])
    record(match, [1, 2])
    after = counted()
    assert after[(bots[0].pk, bots[1].pk)]["ahead"] == before[(bots[0].pk, bots[1].pk)]["ahead"] + 1
    assert after == from_seats()


def test_the_bot_page_reads_a_bounded_range_whatever_the_history(
    make_user: Any, make_bot: Any
) -> None:
    owners = [make_user(f"owner{i}") for i in range(5)]
    bots = [make_bot(owner, f"bot-{i}") for i, owner in enumerate(owners)]
    rng = random.Random(3)
    play(bots, rng, 5)
    with CaptureQueriesContext(connection) as few:
        bot_opponent_records(bot_id=bots[0].pk, limit=3)
    play(bots, rng, 60)
    with CaptureQueriesContext(connection) as many:
        records = bot_opponent_records(bot_id=bots[0].pk, limit=3)
    assert len(few) == len(many) == 1
    expected = sorted(
        ((pair[1], c) for pair, c in from_seats().items() if pair[0] == bots[0].pk),
        key=lambda item: (-item[1]["matches"], item[0]),
    )[:3]
    assert [(r.opponent_id, r.matches, r.ahead, r.behind, r.level) for r in records] == [
        (opp, c["matches"], c["ahead"], c["behind"], c["level"]) for opp, c in expected
    ]


def test_the_migration_counts_what_was_recorded_before_it(make_user: Any, make_bot: Any) -> None:
    import importlib

    owners = [make_user(f"owner{i}") for i in range(4)]
    bots = [make_bot(owner, f"bot-{i}") for i, owner in enumerate(owners)]
    play(bots, random.Random(11), 20)
    expected = counted()
    OpponentTally.objects.all().delete()
    migration = importlib.import_module("ladder.matches.migrations.0007_opponent_tallies")
    migration.backfill(apps, None)
    assert counted() == expected == from_seats()
