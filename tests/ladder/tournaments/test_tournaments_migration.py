"""Moving tournaments, byes, comparisons and deals to the tournaments app keeps every row.

The database is taken back to the state before the move (``matches.0005``),
rows are written through the historical models of the matches app, and the
migrations are applied again: the same rows are read through the tournaments
app's models, with their relations (participants, byes, deals, a match's
tournament and deal). Then back again and forward, as a rollback would. Run on
SQLite and, in the PostgreSQL pass, on PostgreSQL.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)

MOVE = ("matches", "0006_tournaments_move_out")


def _before() -> list[tuple[str, str]]:
    """Just before the move: matches at 0005, every app that does not need the move at
    its latest (their columns are in the database either way)."""
    graph = MigrationExecutor(connection).loader.graph
    after = [
        leaf
        for leaf in graph.leaf_nodes()
        if leaf[0] not in ("matches", "tournaments") and MOVE not in graph.forwards_plan(leaf)
    ]
    return [("matches", "0005_deals_tournaments_comparisons"), *after]


def _migrate(targets: list[tuple[str, str]] | None = None) -> Any:
    """Migrate to ``targets`` (None: every app's latest); the state's apps there."""
    executor = MigrationExecutor(connection)
    if targets is None:
        targets = executor.loader.graph.leaf_nodes()
    executor.migrate(targets)
    executor.loader.build_graph()
    return executor.loader.project_state(targets).apps


def test_the_move_to_the_tournaments_app_keeps_every_row() -> None:
    old = _migrate(_before())
    user = old.get_model("accounts", "User").objects.create(username="mover")
    bot_model, version_model = old.get_model("bots", "Bot"), old.get_model("bots", "BotVersion")
    bots = [bot_model.objects.create(owner=user, name=f"mover-{i}") for i in range(3)]
    versions = [version_model.objects.create(bot=b, number=1) for b in bots]
    cup = old.get_model("matches", "Tournament").objects.create(name="moved cup", status="running")
    cup.participants.set(bots)
    old.get_model("matches", "TournamentBye").objects.create(tournament=cup, round=1, bot=bots[2])
    comparison = old.get_model("matches", "VersionComparison").objects.create(
        bot=bots[0], old_version=versions[0], new_version=versions[0], deals=2
    )
    comparison.opponents.set(bots[1:])
    deal_model = old.get_model("matches", "Deal")
    deal = deal_model.objects.create(seed=7, seats=2, tournament=cup)
    deal_model.objects.create(
        seed=8, seats=2, comparison=comparison, comparison_index=0, comparison_side="old"
    )
    old.get_model("matches", "Match").objects.create(
        seed=7, tournament=cup, deal=deal, deal_rotation=0, rated=False
    )

    for _ in range(2):  # forward, then back and forward again (a rollback and a redo)
        new = _migrate()
        tournament = new.get_model("tournaments", "Tournament").objects.get(name="moved cup")
        assert tournament.pk == cup.pk
        assert sorted(tournament.participants.values_list("pk", flat=True)) == [b.pk for b in bots]
        assert list(tournament.byes.values_list("bot_id", flat=True)) == [bots[2].pk]
        assert list(tournament.deals.values_list("seed", flat=True)) == [7]
        moved = new.get_model("tournaments", "VersionComparison").objects.get()
        assert moved.opponents.count() == 2 and moved.deal_set.get().seed == 8
        match = new.get_model("matches", "Match").objects.get(seed=7)
        assert (match.tournament.name, match.deal.pk) == ("moved cup", deal.pk)
        back = _migrate(_before())
        assert back.get_model("matches", "Tournament").objects.get().participants.count() == 3
    _migrate()
