"""Duplicate deals: one seed, every seat rotation, each bot's result over the set."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, transaction

from ladder.bots.models import Bot
from ladder.common.exceptions import ApplicationError, Conflict
from ladder.matches.models import Match
from ladder.tournaments import selectors
from ladder.tournaments.models import Deal
from ladder.tournaments.services import deal_create
from tests.ladder.conftest import record

pytestmark = pytest.mark.django_db


@pytest.fixture
def three(make_user: Any, make_bot: Any) -> tuple[Any, list[Bot]]:
    alice = make_user("alice")
    return alice, [make_bot(alice, f"deal-{i}") for i in range(3)]


def test_a_deal_rotates_every_bot_through_every_seat_on_one_seed(three: Any) -> None:
    alice, bots = three
    ids = [b.pk for b in bots]
    deal = deal_create(bot_ids=ids, requested_by=alice, rated=False)
    matches = list(Match.objects.filter(deal=deal).order_by("deal_rotation"))
    assert [m.deal_rotation for m in matches] == [0, 1, 2]
    assert {m.seed for m in matches} == {deal.seed}
    seating = [list(m.seats.order_by("seat").values_list("bot_id", flat=True)) for m in matches]
    # rotation r: seat s holds ids[(s - r) mod 3]
    assert seating == [ids, [ids[2], ids[0], ids[1]], [ids[1], ids[2], ids[0]]]
    for bot in ids:  # every bot in every seat exactly once
        assert sorted(row.index(bot) for row in seating) == [0, 1, 2]
    assert all(m.status == Match.Status.QUEUED for m in matches)


def test_deal_results_over_the_set_and_seed_hidden_until_the_deal_is_done(
    three: Any, api: Any
) -> None:
    alice, bots = three
    a, b, c = (bot.pk for bot in bots)
    deal = deal_create(bot_ids=[a, b, c], requested_by=alice, rated=False, seed=1234)
    m0, m1, m2 = Match.objects.filter(deal=deal).order_by("deal_rotation")
    record(m0, [1, 2, 3])  # a, b, c
    body = api.get(f"/api/v1/matches/{m0.pk}/").json()
    assert body["deal"]["id"] == deal.pk and body["deal"]["rotation"] == 0
    assert [m["id"] for m in body["deal"]["matches"]] == [m0.pk, m1.pk, m2.pk]
    assert body["seed"] is None  # its siblings still have to play this cave
    assert body["replay"] is None  # nor its replay, which shows the cave
    assert api.get(f"/api/v1/matches/{m0.pk}/replay/").status_code == 409
    assert api.get(f"/api/v1/matches/{m0.pk}/timeline/").status_code == 409
    record(m1, [3, 1, 2])  # c, a, b -> a 1st, b 2nd, c 3rd
    record(m2, [2, 3, 1])  # b, c, a -> a 1st, b 2nd, c 3rd
    assert api.get(f"/api/v1/matches/{m0.pk}/").json()["seed"] == "1234"
    assert api.get(f"/api/v1/matches/{m0.pk}/replay/").status_code == 200
    summary = selectors.deal_get(deal_id=deal.pk)
    assert summary.complete
    assert [(r.bot_id, r.ranks, r.firsts, r.mean_rank, r.points) for r in summary.results] == [
        (a, [1, 1, 1], 3, 1.0, 6.0),
        (b, [2, 2, 2], 0, 2.0, 3.0),
        (c, [3, 3, 3], 0, 3.0, 0.0),
    ]
    out = api.get(f"/api/v1/deals/{deal.pk}/").json()
    assert out["complete"] and [r["bot"] for r in out["results"]] == [a, b, c]
    assert api.get("/api/v1/deals/999999/").status_code == 404


def test_a_deal_is_all_or_nothing(three: Any) -> None:
    alice, bots = three
    bots[2].is_active = False
    bots[2].save()
    with pytest.raises(Conflict):
        deal_create(bot_ids=[b.pk for b in bots], requested_by=alice)
    with pytest.raises(ApplicationError):
        deal_create(bot_ids=[bots[0].pk, bots[0].pk], requested_by=alice)
    assert not Deal.objects.exists() and not Match.objects.exists()


def test_the_database_refuses_two_matches_in_one_rotation(three: Any) -> None:
    alice, bots = three
    deal = deal_create(bot_ids=[b.pk for b in bots[:2]], requested_by=alice, rated=False)
    first = Match.objects.filter(deal=deal).first()
    assert first is not None
    with pytest.raises(IntegrityError), transaction.atomic():
        Match.objects.create(seed=deal.seed, deal=deal, deal_rotation=first.deal_rotation)
    with pytest.raises(IntegrityError), transaction.atomic():
        Match.objects.create(seed=deal.seed, deal=deal)  # a deal's match has a rotation


def test_match_page_groups_the_deal(three: Any) -> None:
    from django.test import Client

    alice, bots = three
    deal = deal_create(bot_ids=[b.pk for b in bots[:2]], requested_by=alice, rated=False, seed=77)
    m0, m1 = Match.objects.filter(deal=deal).order_by("deal_rotation")
    record(m0, [1, 2])
    page = Client().get(f"/matches/{m0.pk}/").content.decode()
    assert f"Duplicate deal #{deal.pk}" in page and f'href="/matches/{m1.pk}/"' in page
    assert "<code>77</code>" not in page  # the other rotation still has to play this cave
    assert 'id="replay-held"' in page and 'id="replay-viewer"' not in page
    record(m1, [2, 1])  # the same bot wins both: bots[0] in seat 0, then seat 1
    page = Client().get(f"/matches/{m1.pk}/").content.decode()
    assert "<code>77</code>" in page
    assert f'data-bot="{bots[0].name}"><td><a' in page and "1 1" in page
    bot_page = Client().get(f"/bots/{bots[0].pk}/").content.decode()
    assert "deal-mark" in bot_page
    assert f'<tr data-deal="{deal.pk}"><td><a href="/matches/{m0.pk}/#deal">' in bot_page
    assert "<td>1 1</td>" in bot_page  # first in both rotations
    loser_page = Client().get(f"/bots/{bots[1].pk}/").content.decode()
    assert "<td>2 2</td>" in loser_page
