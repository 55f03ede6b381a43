"""Tournaments through the services and REST: schedules, Swiss rounds exactly once,
standings with forfeits, errors and byes, unrated by default, staff-only creation."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest
from django.db import connection

from ladder.bots.models import Bot
from ladder.common.exceptions import ApplicationError, PermissionDenied
from ladder.matches.claims import match_fail
from ladder.matches.models import Match
from ladder.tournaments import selectors
from ladder.tournaments.models import Tournament, TournamentBye
from ladder.tournaments.services import (
    EVENT_PRIORITY,
    tournament_advance,
    tournament_create,
    tournaments_advance_running,
)
from tests.ladder.conftest import make_result, record, standings

pytestmark = pytest.mark.django_db


@pytest.fixture
def five(make_user: Any, make_bot: Any) -> list[Bot]:
    owner = make_user("house")
    return [make_bot(owner, f"t-{i}") for i in range(5)]


def _seating(tournament: Tournament) -> list[list[int]]:
    return [
        list(m.seats.order_by("seat").values_list("bot_id", flat=True))
        for m in Match.objects.filter(tournament=tournament).order_by("pk")
    ]


def test_round_robin_schedules_every_pair_unrated_with_priority(five: list[Bot]) -> None:
    ids = [b.pk for b in five]
    t = tournament_create(name="rr", participant_ids=ids)
    assert t.status == Tournament.Status.RUNNING and not t.rated
    matches = Match.objects.filter(tournament=t)
    assert matches.count() == 10
    assert {frozenset(s) for s in _seating(t)} == {
        frozenset((a, b)) for i, a in enumerate(ids) for b in ids[i + 1 :]
    }
    assert set(matches.values_list("rated", "priority", "status")) == {
        (False, EVENT_PRIORITY, Match.Status.QUEUED)
    }
    first_seats = Counter(s[0] for s in _seating(t))
    assert max(first_seats.values()) - min(first_seats.values()) <= 1  # balanced seats


def test_round_robin_of_duplicate_deals_rotates_each_table(five: list[Bot]) -> None:
    t = tournament_create(
        name="rr3d", participant_ids=[b.pk for b in five], seats=3, duplicate=True
    )
    assert t.deals.count() == 10  # C(5, 3) tables
    for deal in t.deals.all():
        ms = list(deal.matches.order_by("deal_rotation"))
        assert len(ms) == 3 and len({m.seed for m in ms}) == 1
        tables = [list(m.seats.order_by("seat").values_list("bot_id", flat=True)) for m in ms]
        for bot in tables[0]:
            assert sorted(row.index(bot) for row in tables) == [0, 1, 2]


def test_standings_with_a_forfeit_and_an_errored_match_and_no_elo_change(
    five: list[Bot],
) -> None:
    a, b, c = five[:3]
    before = standings()
    t = tournament_create(name="three", participant_ids=[a.pk, b.pk, c.pk])
    by_pair = {
        frozenset(s): m
        for s, m in zip(_seating(t), Match.objects.filter(tournament=t).order_by("pk"), strict=True)
    }
    m_ab, m_ac, m_bc = (
        by_pair[frozenset((a.pk, b.pk))],
        by_pair[frozenset((a.pk, c.pk))],
        by_pair[frozenset((b.pk, c.pk))],
    )
    # a beats b; c forfeits against a (ranked last by the rules); b-c errors.
    seats_ab = list(m_ab.seats.order_by("seat").values_list("bot_id", flat=True))
    record(m_ab, [1, 2] if seats_ab[0] == a.pk else [2, 1])
    seats_ac = list(m_ac.seats.order_by("seat").values_list("bot_id", flat=True))
    forfeit = make_result([1, 2] if seats_ac[0] == a.pk else [2, 1])
    c_seat = seats_ac.index(c.pk)
    forfeit["seats"][c_seat].update(ended="forfeited", reason="timed out")
    from ladder.matches.recording import match_record_result
    from tests.ladder.conftest import make_replay

    match_record_result(match_id=m_ac.pk, result=forfeit, replay_bytes=make_replay(m_ac.pk))
    assert tournament_advance(tournament_id=t.pk).status == Tournament.Status.RUNNING
    match_fail(match_id=m_bc.pk, error="engine died")
    assert tournament_advance(tournament_id=t.pk).status == Tournament.Status.FINISHED
    lines = selectors.tournament_standings(tournament=Tournament.objects.get(pk=t.pk))
    got = [
        (
            ln.standing.bot,
            ln.standing.rank,
            ln.standing.points,
            ln.standing.played,
            ln.standing.errored,
        )
        for ln in lines
    ]
    # b and c: 0 points each; head to head is not played (errored): they share rank 2.
    assert got == [(a.pk, 1, 2.0, 2, 0), (b.pk, 2, 0.0, 1, 1), (c.pk, 2, 0.0, 1, 1)]
    assert standings() == before  # unrated: Elo untouched
    assert Match.objects.get(pk=m_ab.pk).seats.filter(rating_before=None).count() == 0


def test_rated_tournament_changes_elo(five: list[Bot]) -> None:
    before = standings()
    t = tournament_create(name="rated", participant_ids=[five[0].pk, five[1].pk], rated=True)
    record(Match.objects.get(tournament=t), [1, 2])
    assert standings() != before


def _play_round(t: Tournament, number: int) -> None:
    """The better id wins (a fixed strength order), then the tournament advances."""
    for m in Match.objects.filter(tournament=t, tournament_round=number):
        seated = list(m.seats.order_by("seat").values_list("bot_id", flat=True))
        record(m, [1, 2] if seated[0] < seated[1] else [2, 1])
    tournament_advance(tournament_id=t.pk)


def test_swiss_pairs_rounds_without_rematch_and_byes_the_odd_one(five: list[Bot]) -> None:
    ids = [b.pk for b in five]
    t = tournament_create(name="swiss", participant_ids=ids, format=Tournament.Format.SWISS)
    t.refresh_from_db()
    assert t.rounds == 3
    pairs: list[frozenset[int]] = []
    for number in (1, 2, 3):
        round_matches = Match.objects.filter(tournament=t, tournament_round=number)
        assert round_matches.count() == 2  # 5 bots: 2 pairs and a bye per round
        assert TournamentBye.objects.filter(tournament=t, round=number).count() == 1
        seated = [frozenset(m.seats.values_list("bot_id", flat=True)) for m in round_matches]
        assert not set(seated) & set(pairs)  # no rematch
        pairs += seated
        assert Match.objects.filter(tournament=t).count() == 2 * number  # next round not yet
        _play_round(t, number)
    t.refresh_from_db()
    assert t.status == Tournament.Status.FINISHED
    assert (
        len(set(TournamentBye.objects.filter(tournament=t).values_list("bot_id", flat=True))) == 3
    )
    lines = selectors.tournament_standings(tournament=t)
    assert lines[0].standing.bot == ids[0] and lines[0].standing.points == 3.0
    assert all(ln.standing.buchholz >= 0 for ln in lines)
    assert sum(ln.standing.points for ln in lines) == 6 + 3  # 6 games + 3 byes
    # Reproducible: the same matches give the same table.
    again = selectors.tournament_standings(tournament=t)
    assert [(x.standing.bot, x.standing.rank) for x in again] == [
        (x.standing.bot, x.standing.rank) for x in lines
    ]


@pytest.mark.django_db(transaction=True)
def test_concurrent_advances_create_the_next_round_once(five: list[Bot]) -> None:
    ids = [b.pk for b in five[:4]]
    t = tournament_create(name="swiss-race", participant_ids=ids, format=Tournament.Format.SWISS)
    for m in Match.objects.filter(tournament=t, tournament_round=1):
        record(m, [1, 2])
    errors: list[BaseException] = []

    def advance() -> None:
        try:
            tournament_advance(tournament_id=t.pk)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=advance) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=30)
    assert not errors
    assert Match.objects.filter(tournament=t, tournament_round=2).count() == 2
    assert tournaments_advance_running() == []  # round 2 is open: nothing to do


def test_bad_requests_are_refused(five: list[Bot], make_user: Any) -> None:
    ids = [b.pk for b in five]
    with pytest.raises(ApplicationError):
        tournament_create(name="s3", participant_ids=ids, format="swiss", seats=3)
    with pytest.raises(ApplicationError):
        tournament_create(name="dup", participant_ids=[ids[0], ids[0]])
    with pytest.raises(PermissionDenied):
        tournament_create(name="mine", participant_ids=ids, created_by=make_user("bob"))
    assert not Tournament.objects.exists()


def test_rest_create_is_for_staff_and_shows_standings(
    five: list[Bot], api: Any, make_user: Any
) -> None:
    body = {"name": "web", "participants": [b.pk for b in five[:3]], "format": "round_robin"}
    assert api.post("/api/v1/tournaments/", body, format="json").status_code == 401
    api.force_authenticate(make_user("bob"))
    assert api.post("/api/v1/tournaments/", body, format="json").status_code == 403
    api.force_authenticate(make_user("admin", staff=True))
    r = api.post("/api/v1/tournaments/", body, format="json")
    assert r.status_code == 201, r.content
    out = r.json()
    assert (out["status"], out["rated"], out["participant_count"]) == ("running", False, 3)
    assert api.post("/api/v1/tournaments/", body, format="json").status_code == 409
    bad = dict(body, name="x", format="swiss", seats=4)
    assert api.post("/api/v1/tournaments/", bad, format="json").status_code == 400
    for m in Match.objects.filter(tournament_id=out["id"]):
        record(m, [1, 2])
    tournament_advance(tournament_id=out["id"])
    table = api.get(f"/api/v1/tournaments/{out['id']}/standings/").json()
    assert table["count"] == 3 and table["next"] is None
    assert sum(row["points"] for row in table["results"]) == 3.0
    assert api.get(f"/api/v1/tournaments/{out['id']}/").json()["status"] == "finished"


def test_admin_enters_a_tournament_and_starts_it(five: list[Bot], make_user: Any) -> None:
    from django.test import Client

    root = make_user("root", staff=True)
    root.is_superuser = True
    root.save()
    client = Client()
    client.force_login(root)
    form = {
        "name": "admin-cup",
        "format": "swiss",
        "participants": [b.pk for b in five[:4]],
        "seats": 3,
        "ladder": "",
    }
    r = client.post("/admin/tournaments/tournament/add/", form)
    assert r.status_code == 200 and b"a Swiss tournament has 2 seats" in r.content
    r = client.post("/admin/tournaments/tournament/add/", {**form, "seats": 2})
    assert r.status_code == 302, r.content
    t = Tournament.objects.get(name="admin-cup")
    assert t.status == Tournament.Status.PENDING and not Match.objects.filter(tournament=t)
    client.post("/admin/tournaments/tournament/", {"action": "start", "_selected_action": [t.pk]})
    t.refresh_from_db()
    assert t.status == Tournament.Status.RUNNING and t.rounds == 2
    assert Match.objects.filter(tournament=t, tournament_round=1).count() == 2
    for url in ("/admin/tournaments/deal/", "/admin/tournaments/versioncomparison/"):
        assert client.get(url).status_code == 200
    assert client.get(f"/admin/tournaments/tournament/{t.pk}/change/").status_code == 200


def test_a_suspended_bot_is_withdrawn_and_the_swiss_still_finishes(
    five: list[Bot], make_user: Any
) -> None:
    from ladder.bots.services import bot_suspend

    ids = [b.pk for b in five[:4]]
    t = tournament_create(name="withdrawn", participant_ids=ids, format="swiss", rounds=3)
    loser = max(ids)  # the better id wins: the highest id loses round 1
    _play_round(t, 1)
    assert Match.objects.filter(tournament=t, tournament_round=2).count() == 2
    bot_suspend(user=make_user("mod", staff=True), bot_id=loser, reason="crashes")
    _play_round(t, 2)
    round3 = Match.objects.filter(tournament=t, tournament_round=3)
    assert round3.count() == 1  # three left: one pair and a bye
    assert loser not in {s for m in round3 for s in m.seats.values_list("bot_id", flat=True)}
    assert TournamentBye.objects.filter(tournament=t, round=3).exclude(bot_id=loser).exists()
    _play_round(t, 3)
    t.refresh_from_db()
    assert t.status == Tournament.Status.FINISHED
    lines = selectors.tournament_standings(tournament=t)
    assert {ln.standing.bot for ln in lines} == set(ids)  # its results stay in the table


def test_rest_standings_are_paged_in_their_order(five: list[Bot]) -> None:
    from rest_framework.test import APIClient

    t = tournament_create(name="paged", participant_ids=[b.pk for b in five])
    for m in Match.objects.filter(tournament=t).order_by("pk"):
        seated = list(m.seats.order_by("seat").values_list("bot_id", flat=True))
        record(m, [1, 2] if seated[0] < seated[1] else [2, 1])  # the older bot wins
    whole = [(line.standing.bot, line.standing.rank, line.standing.points)
             for line in selectors.tournament_standings(tournament=t)]  # fmt: skip
    api = APIClient()
    url: str | None = f"/api/v1/tournaments/{t.pk}/standings/?page_size=2"
    read, pages = [], 0
    while url:
        page = api.get(url).json()
        assert page["count"] == 5 and len(page["results"]) <= 2
        read += [(r["bot"], r["rank"], r["points"]) for r in page["results"]]
        url, pages = page["next"], pages + 1
    assert read == whole and pages == 3
    assert [rank for _, rank, _ in whole] == [1, 2, 3, 4, 5]
    default = api.get(f"/api/v1/tournaments/{t.pk}/standings/").json()
    assert default["next"] is None and len(default["results"]) == 5
    assert api.get(f"/api/v1/tournaments/{t.pk}/standings/?page=4&page_size=2").status_code == 404
    assert api.get(f"/api/v1/tournaments/{t.pk}/standings/?page_size=0").status_code == 400
