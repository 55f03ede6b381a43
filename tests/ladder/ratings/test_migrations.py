"""The data migrations of ratings per ladder keep every rating, counter and link.

Migrates the test database back to the first schema, stores a small history the
way the old code did (ratings on the bot), migrates forward and checks that it
arrived on the default ladder: entries, wins counted from the seats, current
versions, matches on the ladder, seats linked to their result; then ``rerate
--check`` agrees with it.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("accounts", "0001_initial"), ("bots", "0001_initial"), ("matches", "0001_initial")]


def migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_old_ratings_arrive_on_the_default_ladder(capsys: Any) -> None:
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    old = migrate(BEFORE)
    user = old.get_model("accounts", "User").objects.create(username="alice")
    Bot = old.get_model("bots", "Bot")
    version = old.get_model("bots", "BotVersion")
    a = Bot.objects.create(owner=user, name="alpha", kind="remote", rating=151600, games=1)
    b = Bot.objects.create(owner=user, name="bravo", kind="remote", rating=148400, games=1)
    idle = Bot.objects.create(owner=user, name="idle", kind="remote")
    version.objects.create(bot=a, number=1, endpoint="a.example:1")
    a2 = version.objects.create(bot=a, number=2, endpoint="a.example:2")
    b1 = version.objects.create(bot=b, number=1, endpoint="b.example:1")
    match = old.get_model("matches", "Match").objects.create(
        seed=1, status="finished", replay_sha256="0" * 64
    )
    result = old.get_model("matches", "MatchResult").objects.create(
        match=match, reason="won", winner=0, data={}, elo_k=32.0
    )
    seat = old.get_model("matches", "MatchSeat")
    seat.objects.create(
        match=match, seat=0, bot=a, version=a2, rank=1, rating_before=150000, rating_after=151600
    )
    seat.objects.create(
        match=match, seat=1, bot=b, version=b1, rank=2, rating_before=150000, rating_after=148400
    )

    migrate(latest)
    from ladder.bots.models import Bot as NewBot
    from ladder.matches.models import Match, MatchSeat
    from ladder.ratings.models import BotRating

    entries = BotRating.objects.filter(ladder="dd-1").order_by("bot__name")
    assert list(entries.values_list("bot__name", "rating", "games", "wins")) == [
        ("alpha", 151600, 1, 1),
        ("bravo", 148400, 1, 0),
        ("idle", 150000, 0, 0),
    ]
    assert NewBot.objects.get(pk=a.pk).current_version_id == a2.pk
    assert NewBot.objects.get(pk=idle.pk).current_version_id is None
    assert Match.objects.get(pk=match.pk).ladder == "dd-1"
    assert set(MatchSeat.objects.values_list("result_id", flat=True)) == {result.pk}
    call_command("rerate", "--check")
    assert "dd-1: 1 results replayed, 2 bots rated, 0 mismatches found" in capsys.readouterr().out
