"""bots/0007 (the connected kind, a longer ``kind`` column) keeps every existing bot."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.ladder.ratings.test_migrations import migrate

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_connected_kind_keeps_existing_bots() -> None:
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
    old = migrate([("bots", "0006_botrating_to_ratings")])
    user = old.get_model("accounts", "User").objects.create(username="keeper")
    Bot = old.get_model("bots", "Bot")
    kept = {
        Bot.objects.create(owner=user, name=name, kind=kind, description=name * 2).pk: kind
        for name, kind in (("hosty", "hosted"), ("remo", "remote"))
    }
    migrate(latest)
    from ladder.bots.models import Bot as NewBot

    assert dict(NewBot.objects.filter(pk__in=kept).values_list("pk", "kind")) == kept
    assert NewBot.objects.get(name="remo").description == "remoremo"
    longest = NewBot._meta.get_field("kind").max_length
    assert longest is not None and longest >= len(NewBot.Kind.CONNECTED.value)
