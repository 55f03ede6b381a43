"""Tournaments and version comparisons played end to end by real Celery workers.

Real ``celery worker`` processes on Redis (a server of the test's own), a real
engine and real remote house bots on loopback (random bots and the heuristic
one). The worker advances a tournament right after recording each of its
matches (the next Swiss round, or the end); standings are checked against a
hand computation from the recorded results. Bounded: 10 + 4 + 3 + 32 matches.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.ratings.models import BotRating
from ladder.tournaments import selectors
from ladder.tournaments.models import Tournament
from ladder.tournaments.selectors import comparison_report
from ladder.tournaments.services import comparison_create, tournament_create
from tests.support.processes import Proc, start_bot
from tests.support.workers import wait_until
from tests.workers.cluster.conftest import Cluster

RANDOM = ["rand0", "rand1", "rand2", "rand3"]


@pytest.fixture(scope="session")
def heuristic_bot(celery_procdir: Path) -> Iterator[Proc]:
    bot = start_bot("examples.heuristic_bot", celery_procdir, "heuristic")
    yield bot
    bot.stop()


@pytest.fixture
def cluster(make_cluster: Any, heuristic_bot: Proc) -> Cluster:
    from ladder.accounts.models import User
    from ladder.bots.services import bot_create

    c: Cluster = make_cluster("redis")
    house = User.objects.create_user(username="house", password="pw-12345678")
    c.bots["heur"] = bot_create(
        owner=house, name="heur", kind="remote", endpoint=heuristic_bot.address
    ).pk
    return c


def _closed(tournament_id: int) -> bool:
    return Tournament.objects.filter(pk=tournament_id, status="finished").exists()


def _ratings() -> list[tuple[int, str, int, int]]:
    return list(
        BotRating.objects.order_by("bot_id", "ladder").values_list(
            "bot_id", "ladder", "rating", "games"
        )
    )


def _hand_standings(tournament_id: int) -> dict[int, tuple[float, float, int]]:
    """Points, head-to-head among equals and first places, from the recorded ranks."""
    points: dict[int, float] = defaultdict(float)
    against: dict[tuple[int, int], float] = defaultdict(float)
    firsts: dict[int, int] = defaultdict(int)
    for m in Match.objects.filter(tournament_id=tournament_id, status="finished"):
        seats = list(m.seats.values_list("bot_id", "rank"))
        for bot, rank in seats:
            firsts[bot] += rank == 1
            for other, other_rank in seats:
                if other != bot:
                    score = 1.0 if rank < other_rank else 0.5 if rank == other_rank else 0.0
                    points[bot] += score
                    against[(bot, other)] += score
    h2h = {
        bot: sum(s for (b, o), s in against.items() if b == bot and points[o] == points[bot])
        for bot in points
    }
    return {bot: (points[bot], h2h[bot], firsts[bot]) for bot in points}


def test_round_robin_of_five_house_bots_played_by_workers(cluster: Cluster) -> None:
    names = [*RANDOM, "heur"]
    ids = [cluster.bots[n] for n in names]
    before = _ratings()
    cluster.start_worker(concurrency=2)
    t = tournament_create(name="house-rr", participant_ids=ids)
    wait_until(lambda: _closed(t.pk), 240, "the round robin finished (advanced by the worker)")
    matches = Match.objects.filter(tournament=t)
    assert matches.count() == 10 and set(matches.values_list("status", flat=True)) == {"finished"}
    assert _ratings() == before  # unrated: no Elo change
    hand = _hand_standings(t.pk)
    lines = selectors.tournament_standings(tournament=Tournament.objects.get(pk=t.pk))
    assert {ln.standing.bot: ln.standing.points for ln in lines} == {b: hand[b][0] for b in ids}
    assert sum(hand[b][0] for b in ids) == 10.0  # one point per 2-seat match
    keys = [hand[ln.standing.bot] for ln in lines]
    assert keys == sorted(keys, key=lambda k: (-k[0], -k[1], -k[2]))  # ordered by tie-breaks
    for a, b in itertools.pairwise(lines):  # shared rank only when equal on all
        assert (a.standing.rank == b.standing.rank) == (
            hand[a.standing.bot] == hand[b.standing.bot]
        )
    # Reproducible: the same matches give the same final table.
    again = selectors.tournament_standings(tournament=Tournament.objects.get(pk=t.pk))
    assert [(x.standing.bot, x.standing.rank, x.standing.points) for x in again] == [
        (x.standing.bot, x.standing.rank, x.standing.points) for x in lines
    ]


def test_swiss_rounds_follow_each_other(cluster: Cluster) -> None:
    ids = [cluster.bots[n] for n in [*RANDOM[:3], "heur"]]
    cluster.start_worker(concurrency=2)
    t = tournament_create(name="house-swiss", participant_ids=ids, format="swiss")
    wait_until(lambda: _closed(t.pk), 240, "the Swiss finished")
    r1 = Match.objects.filter(tournament=t, tournament_round=1)
    r2 = Match.objects.filter(tournament=t, tournament_round=2)
    assert r1.count() == r2.count() == 2 and Match.objects.filter(tournament=t).count() == 4
    # Round 2 was paired once round 1 was over, and without a rematch.
    assert min(m.created_at for m in r2) >= max(m.finished_at for m in r1)
    pairs = [frozenset(m.seats.values_list("bot_id", flat=True)) for m in [*r1, *r2]]
    assert len(set(pairs)) == 4
    lines = selectors.tournament_standings(tournament=Tournament.objects.get(pk=t.pk))
    assert sum(ln.standing.points for ln in lines) == 4.0
    assert all(ln.standing.played == 2 for ln in lines)


def test_tournament_matches_go_before_queued_ladder_matches(cluster: Cluster) -> None:
    """Redis priorities: the tournament's match, queued last, is played first."""
    ladder = [
        match_create(bot_ids=[cluster.bots["rand0"], cluster.bots["rand1"]], seed=i).pk
        for i in range(2)
    ]
    t = tournament_create(
        name="first", participant_ids=[cluster.bots["rand2"], cluster.bots["rand3"]]
    )
    cluster.start_worker(concurrency=1)
    wait_until(lambda: _closed(t.pk), 120, "the tournament finished")
    wait_until(
        lambda: Match.objects.filter(pk__in=ladder, status="finished").count() == 2,
        120,
        "the ladder matches finished",
    )
    first = Match.objects.get(tournament=t)
    assert first.started_at is not None
    assert all(first.started_at < m.started_at for m in Match.objects.filter(pk__in=ladder))


def test_version_comparison_heuristic_beats_random(cluster: Cluster, heuristic_bot: Proc) -> None:
    """v1 of a bot is the random house bot, v2 the heuristic one: v2 - v1 is positive with
    a 95% interval that excludes 0, over 8 deals of 2 seats (32 matches)."""
    from ladder.accounts.models import User
    from ladder.bots.services import bot_create, bot_set_endpoint

    author = User.objects.create_user(username="author", password="pw-12345678")
    from ladder.bots.models import BotVersion

    random_endpoint = BotVersion.objects.get(bot_id=cluster.bots["rand3"]).endpoint
    mine = bot_create(owner=author, name="mine", kind="remote", endpoint=random_endpoint)
    bot_set_endpoint(user=author, bot_id=mine.pk, endpoint=heuristic_bot.address)
    before = _ratings()
    c = comparison_create(
        user=author,
        bot_id=mine.pk,
        old_version=1,
        new_version=2,
        opponent_ids=[cluster.bots["rand0"]],
        deals=8,
    )
    cluster.start_worker(concurrency=2)
    wait_until(lambda: comparison_report(c).status == "finished", 300, "the comparison played")
    report = comparison_report(c)
    assert report.complete_deals == 8, report
    r = report.result
    assert r is not None
    assert r.new_first_share > r.old_first_share
    assert r.first_share_diff.low > 0, report.summary  # the interval excludes 0
    assert r.mean_rank_diff.high < 0, report.summary  # and the new version ranks better
    assert report.summary.startswith("v2 - v1: +")
    assert _ratings() == before
