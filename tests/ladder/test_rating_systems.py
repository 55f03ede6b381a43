"""Rating systems per ladder, switching by recompute, seasons and every version rated.

Real recording service, real database, the REST API and ``manage.py`` commands;
each system is the one a ladder is configured with (``LADDER_LADDERS[...]['system']``).
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from ladder.bots.services import bot_version_smoke_record, bot_version_upload
from ladder.matches.creation import match_create
from ladder.matches.models import MatchSeat
from ladder.ratings import systems
from ladder.ratings.models import BotRating, RatingChange, Season, VersionRating
from ladder.ratings.recompute import ratings_recompute, ratings_rewrite
from ladder.ratings.services import conservative
from tests.ladder.conftest import record

pytestmark = pytest.mark.django_db
SYSTEMS = sorted(systems.LADDER_SYSTEMS)


@pytest.fixture
def ladder_with(settings: Any) -> Any:
    """Configure dd-1 to rate with ``system`` (its first season takes it on first use)."""

    def _set(system: str) -> None:
        settings.LADDER_LADDERS = {
            "dd-1": {"ruleset": "dd-1", "difficulty": "normal", "seats": (2, 4), "system": system}
        }

    return _set


@pytest.fixture
def six(make_user: Any, make_bot: Any) -> Any:
    """An owner and six bots, made when called (after the ladder is configured)."""

    def _make() -> tuple[Any, list[Any]]:
        alice = make_user("alice")
        return alice, [make_bot(alice, f"bot-{i}") for i in range(6)]

    return _make


def play(owner: Any, bots: list[Any], n: int, seed: int = 1) -> None:
    """``n`` recorded matches of 2-4 seats; bot i tends to beat bot j > i."""
    rng = random.Random(seed)
    for _ in range(n):
        seated = rng.sample(bots, rng.choice((2, 3, 4)))
        strength = {b.pk: -bots.index(b) + rng.gauss(0, 1.5) for b in seated}
        order = sorted(seated, key=lambda b: -strength[b.pk])
        ranks = [order.index(b) + 1 for b in seated]
        record(match_create(bot_ids=[b.pk for b in seated], requested_by=owner), ranks)


@pytest.mark.parametrize("system", SYSTEMS)
def test_each_system_rates_records_the_ledger_and_rerate_check_holds(
    system: str, ladder_with: Any, six: Any
) -> None:
    ladder_with(system)
    alice, bots = six()
    play(alice, bots, 24)
    assert Season.objects.get(ladder="dd-1").system == system
    entries = {e.bot_id: e for e in BotRating.objects.filter(ladder="dd-1")}
    assert all(e.score == conservative(e.rating, e.sigma) for e in entries.values())
    assert sum(e.games for e in entries.values()) == MatchSeat.objects.count()
    # The ledger has every seat, before/after as on the seat, sigma shrinking with games.
    assert RatingChange.objects.count() == MatchSeat.objects.count()
    for change in RatingChange.objects.all():
        seat = MatchSeat.objects.get(match_id=change.match_id, seat=change.seat)
        assert (seat.rating_before, seat.rating_after) == (
            change.rating_before, change.rating_after
        )  # fmt: skip
    best, worst = entries[bots[0].pk], entries[bots[-1].pk]
    assert (
        best.rating > worst.rating and best.sigma < systems.system_get(system).initial().sigma * 100
    )
    rec = ratings_recompute(ladder="dd-1")
    assert rec.mismatch_count == 0, rec.mismatches
    call_command("rerate", "--check")  # exits 1 on any mismatch


def test_switching_system_is_a_recompute_and_every_system_checks(
    ladder_with: Any, six: Any, capsys: Any
) -> None:
    ladder_with("elo")
    alice, bots = six()
    play(alice, bots, 20)
    elo_ratings = dict(BotRating.objects.values_list("bot_id", "rating"))
    for system in ["plackett-luce", "bradley-terry", "elo"]:
        call_command("rerate", "--ladder", "dd-1", "--system", system)
        assert "(system " + system + ")" in capsys.readouterr().out
        assert set(Season.objects.values_list("system", flat=True)) == {system}
        call_command("rerate", "--check")
        # The same history rated afresh: recording more goes on under the new system.
        play(alice, bots, 2, seed=len(system))
        assert ratings_recompute(ladder="dd-1").mismatch_count == 0
    # Back on Elo with the history replayed: the first 20 results give the same ratings.
    assert elo_ratings != dict(BotRating.objects.values_list("bot_id", "rating"))  # 6 more games
    with pytest.raises(Exception, match="--check"):
        call_command("rerate", "--check", "--system", "elo")


def test_tampered_sigma_or_ledger_is_found(ladder_with: Any, six: Any) -> None:
    ladder_with("plackett-luce")
    alice, bots = six()
    play(alice, bots, 6)
    BotRating.objects.filter(bot=bots[0]).update(sigma=1)
    RatingChange.objects.filter(pk=RatingChange.objects.order_by("pk").first().pk).update(
        sigma_after=7
    )
    rec = ratings_recompute(ladder="dd-1")
    assert rec.mismatch_count == 2, rec.mismatches
    ratings_rewrite(ladder="dd-1")
    assert ratings_recompute(ladder="dd-1").mismatch_count == 0


def test_a_redelivered_result_never_rates_twice(ladder_with: Any, six: Any) -> None:
    ladder_with("plackett-luce")
    alice, bots = six()
    match = match_create(bot_ids=[b.pk for b in bots[:3]], requested_by=alice)
    assert record(match, [1, 2, 3]).recorded
    before = list(BotRating.objects.order_by("bot_id").values_list("rating", "sigma", "games"))
    assert not record(match, [3, 2, 1]).recorded
    assert list(BotRating.objects.order_by("bot_id").values_list("rating", "sigma", "games")) == (
        before
    )
    assert RatingChange.objects.count() == 3


def test_a_season_resets_softly_and_keeps_its_final_table(
    ladder_with: Any, six: Any, make_user: Any
) -> None:
    ladder_with("plackett-luce")
    alice, bots = six()
    play(alice, bots, 30)
    ended = {e.bot_id: e for e in BotRating.objects.filter(ladder="dd-1")}
    staff = make_user("root", staff=True)
    api = APIClient()
    assert api.post("/api/v1/seasons/start/", {"ladder": "dd-1"}).status_code in (401, 403)
    api.force_authenticate(staff)
    resp = api.post("/api/v1/seasons/start/", {"ladder": "dd-1", "shrink": 0.5}, format="json")
    assert resp.status_code == 201, resp.content
    assert resp.json()["number"] == 2 and resp.json()["system"] == "plackett-luce"
    start = 150000
    for e in BotRating.objects.filter(ladder="dd-1"):
        old = ended[e.bot_id]
        assert e.rating == start + round(0.5 * (old.rating - start))
        assert e.sigma >= old.sigma and e.games == e.wins == 0
    table = api.get("/api/v1/seasons/1/standings/?ladder=dd-1").json()
    assert table["count"] == 6
    rows = table["results"]
    assert [r["position"] for r in rows] == [1, 2, 3, 4, 5, 6]
    assert rows[0]["name"] == "bot-0"  # the strongest by construction, officially first
    assert rows[0]["games"] == ended[bots[0].pk].games
    assert api.get("/api/v1/seasons/2/standings/?ladder=dd-1").status_code == 409
    assert api.get("/api/v1/seasons/9/standings/?ladder=dd-1").status_code == 404
    seasons = api.get("/api/v1/seasons/?ladder=dd-1").json()
    assert [(s["number"], s["finished"]) for s in seasons] == [(2, False), (1, True)]
    # The new season rates on; history per season; rerate replays across the boundary.
    play(alice, bots, 10, seed=2)
    history = api.get(f"/api/v1/bots/{bots[0].pk}/rating-history/?ladder=dd-1&season=2").json()
    assert history and {h["season"] for h in history} == {2}
    assert all(h["sigma_after"] > 0 for h in history)
    first = api.get(f"/api/v1/bots/{bots[0].pk}/rating-history/?ladder=dd-1&season=1").json()
    assert {h["season"] for h in first} == {1} and len(first) == ended[bots[0].pk].games
    rec = ratings_recompute(ladder="dd-1")
    assert rec.mismatch_count == 0, rec.mismatches
    # Switching the system re-rates both seasons (tables included) and still checks.
    ratings_rewrite(ladder="dd-1", system="elo")
    assert ratings_recompute(ladder="dd-1").mismatch_count == 0
    # The pages: a season selector, the final table, the bot's history of a season.
    page = api.get("/?ladder=dd-1&season=1")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="season-table"' in html and 'name="season"' in html
    bot_page = api.get(f"/bots/{bots[0].pk}/?season=1").content.decode()
    assert 'id="season-nav"' in bot_page and "season 1" in bot_page
    assert api.get(f"/bots/{bots[0].pk}/?season=7").status_code == 404


def test_every_version_has_its_own_rating_and_a_lineage(
    ladder_with: Any, six: Any, make_user: Any
) -> None:
    ladder_with("plackett-luce")
    alice, bots = six()
    play(alice, bots, 12)
    bots[0].refresh_from_db()
    v1 = bots[0].current_version_id
    v1_entry = VersionRating.objects.get(version_id=v1)
    version = bot_version_upload(
        user=alice, bot_id=bots[0].pk, filename="bot.py", data=b"def act(obs):\n    return 1\n"
    )
    bot_version_smoke_record(version_id=version.pk, passed=True, outcome="passed", log=b"")
    # v2 against v1 (a comparison-style pinned match) and against the others.
    for ranks in ([1, 2], [1, 2], [2, 1]):
        m = match_create(
            bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice, versions={bots[0].pk: v1}
        )
        record(m, [2, 1])
        m2 = match_create(bot_ids=[bots[0].pk, bots[2].pk], requested_by=alice)
        record(m2, ranks)
    v2 = VersionRating.objects.get(version=version)
    assert v2.games == 3
    lineage = APIClient().get(f"/api/v1/bots/{bots[0].pk}/lineage/?ladder=dd-1").json()
    assert [row["number"] for row in lineage] == [2, 1]
    assert lineage[0]["games"] == 3 and lineage[1]["games"] == v1_entry.games + 3
    # How far v2 moved from v1, which is where it started; the oldest has nothing before it.
    v1_entry.refresh_from_db()
    assert lineage[0]["rating_change"] == pytest.approx((v2.rating - v1_entry.rating) / 100)
    assert lineage[0]["rating_change"] != 0 and lineage[1]["rating_change"] is None
    # The first seeded entry started from v1's rating with a wider sigma.
    first_change = RatingChange.objects.filter(version=version).order_by("result_id").first()
    assert first_change is not None and first_change.version_rating_after is not None
    assert ratings_recompute(ladder="dd-1").mismatch_count == 0
    page = APIClient().get(f"/bots/{bots[0].pk}/").content.decode()
    assert 'id="lineage"' in page and 'data-version="2"' in page


def test_versions_play_each_other_in_the_lineage(ladder_with: Any, six: Any) -> None:
    ladder_with("elo")
    alice, bots = six()
    bots[0].refresh_from_db()
    old = bots[0].current_version_id
    new = bot_version_upload(
        user=alice, bot_id=bots[0].pk, filename="bot.py", data=b"def act(obs):\n    return 2\n"
    )
    bot_version_smoke_record(version_id=new.pk, passed=True, outcome="passed", log=b"")
    # Two seats of one bot cannot share a match; its versions meet through a twin bot's
    # pinned versions only in comparisons (off-ladder). The lineage still lists both.
    record(match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice), [1, 2])
    rows = APIClient().get(f"/api/v1/bots/{bots[0].pk}/lineage/?ladder=dd-1").json()
    assert [r["number"] for r in rows] == [2]
    assert rows[0]["vs_previous"] == {"ahead": 0, "behind": 0, "level": 0}
    assert old != new.pk


def test_a_lineage_reads_its_entries_only_however_long_the_history(
    ladder_with: Any, six: Any
) -> None:
    """The record against the previous version is nothing ahead, behind or level because
    no match can seat two versions of one bot (what the lineage relies on to read no
    seats): not as two seats of the bot, not as another bot pinned to its version."""
    from django.db import IntegrityError, connection, transaction
    from django.test.utils import CaptureQueriesContext

    from ladder.common.exceptions import ApplicationError
    from ladder.ratings.selectors import bot_lineage

    ladder_with("elo")
    alice, bots = six()
    counts = []
    for n in range(3):
        version = bot_version_upload(
            user=alice, bot_id=bots[0].pk, filename="bot.py", data=f"x = {n}\n".encode()
        )
        bot_version_smoke_record(version_id=version.pk, passed=True, outcome="passed", log=b"")
        play(alice, bots, 8, seed=n)
        with CaptureQueriesContext(connection) as ctx:
            rows = bot_lineage(bot_id=bots[0].pk, ladder="dd-1")
        counts.append(len(ctx.captured_queries))
        assert [(r.ahead, r.behind, r.level) for r in rows] == [(0, 0, 0)] * len(rows)
    assert len(rows) >= 3 and counts == [1, 1, 1]
    with pytest.raises(ApplicationError):
        match_create(
            bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice,
            versions={bots[1].pk: bots[0].current_version_id},
        )  # fmt: skip
    with pytest.raises((ApplicationError, IntegrityError)), transaction.atomic():
        match_create(bot_ids=[bots[0].pk, bots[0].pk], requested_by=alice)


def test_leaderboard_ranks_by_the_conservative_rating(ladder_with: Any, six: Any) -> None:
    ladder_with("plackett-luce")
    alice, bots = six()
    play(alice, bots, 18)
    board = APIClient().get("/api/v1/leaderboard/?ladder=dd-1").json()["results"]
    scores = [r["score"] for r in board]
    assert scores == sorted(scores, reverse=True)
    for r in board:
        assert r["score"] == pytest.approx(max(0.0, r["rating"] - 3 * r["sigma"]), abs=0.02)
        lo, _ = r["interval95"]
        assert lo == pytest.approx(r["rating"] - 1.96 * r["sigma"], abs=0.02)
        # Provisional: fewer than 10 games or sigma above 135 points, in every system.
        assert r["provisional"] == (r["games"] < 10 or r["sigma"] > 135)
    html = APIClient().get("/?ladder=dd-1").content.decode()
    assert "Rank rating" in html and "the rating minus 3\u03c3 (never below 0)" in html
    assert (
        'data-system="plackett-luce">Plackett\u2013Luce (Weng\u2013Lin), on the Elo scale' in html
    )
