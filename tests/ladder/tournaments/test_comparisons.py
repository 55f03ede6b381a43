"""Version comparisons through the services and REST: pinned versions on shared deals,
the paired answer, owner-only access, bounds."""

from __future__ import annotations

from typing import Any

import pytest

from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_version_smoke_record, bot_version_upload
from ladder.matches.models import Match
from ladder.tournaments.models import Deal
from ladder.tournaments.selectors import comparison_report
from ladder.tournaments.services import comparison_create
from tests.ladder.conftest import record, standings

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(make_user: Any, make_bot: Any) -> tuple[Any, Bot, list[Bot]]:
    alice = make_user("alice")
    house = make_user("house")
    mine = make_bot(alice, "mine")
    v2 = bot_version_upload(
        user=alice, bot_id=mine.pk, filename="bot.py", data=b"def act(o):\n    return 1\n"
    )
    bot_version_smoke_record(version_id=v2.pk, passed=True, outcome="passed (fixture)", log=b"")
    return alice, mine, [make_bot(house, "opp-a"), make_bot(house, "opp-b")]


def test_both_versions_play_the_same_deals_and_the_answer_is_paired(setup: Any) -> None:
    alice, mine, opps = setup
    before = standings()
    c = comparison_create(
        user=alice, bot_id=mine.pk, old_version=1, new_version=2,
        opponent_ids=[o.pk for o in opps], deals=3,
    )  # fmt: skip
    deals = list(Deal.objects.filter(comparison=c).order_by("comparison_index", "comparison_side"))
    assert len(deals) == 6 and Match.objects.filter(deal__comparison=c).count() == 18
    for index in range(3):
        new, old = (d for d in deals if d.comparison_index == index)  # "new" < "old"
        assert new.seed == old.seed  # the same cave for both versions
    v1, v2 = (BotVersion.objects.get(bot=mine, number=n).pk for n in (1, 2))
    for deal in deals:
        for m in deal.matches.all():
            assert not m.rated
            seat = m.seats.get(bot=mine)
            assert seat.version_id == (v2 if deal.comparison_side == "new" else v1)
    report = comparison_report(c)
    assert (report.status, report.open, report.result) == ("running", 18, None)
    # The new version wins every rotation; the old one comes second in each.
    for deal in deals:
        for m in deal.matches.all():
            seated = list(m.seats.order_by("seat").values_list("bot_id", flat=True))
            rank_of_mine = 1 if deal.comparison_side == "new" else 2
            others = iter([2, 3] if rank_of_mine == 1 else [1, 3])
            record(m, [rank_of_mine if b == mine.pk else next(others) for b in seated])
    report = comparison_report(c)
    assert report.status == "finished" and report.complete_deals == 3
    r = report.result
    assert r is not None
    assert (r.old_first_share, r.new_first_share, r.old_mean_rank, r.new_mean_rank) == (0, 1, 2, 1)
    assert r.first_share_diff.mean == 1.0 and r.first_share_diff.excludes_zero
    assert report.summary.startswith("v2 - v1: +1.00 rank-1 share, 95% CI [+1.00, +1.00]")
    assert standings() == before  # unrated


def test_rest_owner_only_and_bounds(setup: Any, api: Any, make_user: Any) -> None:
    alice, mine, opps = setup
    body = {
        "bot": mine.pk,
        "old_version": 1,
        "new_version": 2,
        "opponents": [opps[0].pk],
        "deals": 2,
    }
    assert api.post("/api/v1/comparisons/", body, format="json").status_code == 401
    api.force_authenticate(make_user("mallory"))
    assert api.post("/api/v1/comparisons/", body, format="json").status_code == 403
    api.force_authenticate(alice)
    for bad, code in (
        ({"deals": 100000}, 400),
        ({"deals": 51}, 400),
        ({"new_version": 9}, 404),
        ({"new_version": 1}, 400),
        ({"opponents": [mine.pk]}, 400),
    ):
        r = api.post("/api/v1/comparisons/", {**body, **bad}, format="json")
        assert r.status_code == code, (bad, r.content)
    r = api.post("/api/v1/comparisons/", body, format="json")
    assert r.status_code == 201, r.content
    out = r.json()
    assert (out["status"], out["matches"], out["result"]) == ("running", 8, None)
    assert "an answer needs at least 2" in out["summary"]
    assert api.get("/api/v1/comparisons/").json()["results"][0]["id"] == out["id"]
    api.force_authenticate(make_user("eve"))
    assert api.get(f"/api/v1/comparisons/{out['id']}/").status_code == 403
    assert api.get("/api/v1/comparisons/").json()["results"] == []
