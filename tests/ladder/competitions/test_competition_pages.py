"""The competition pages: the list linked from the leaderboard, entering through the
form, the final's bracket and the result with intervals; a page's queries do not grow
with the competition's history."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ladder.competitions.models import Competition
from ladder.competitions.services import competitions_tick, final_advance
from tests.ladder.competitions.test_competitions import _create, _play_open

pytestmark = pytest.mark.django_db


def test_pages_walk_a_competition(client: Any, make_user: Any, make_bot: Any) -> None:
    staff = make_user("staff", staff=True)
    users = [make_user(f"p{i}") for i in range(3)]
    bots = [make_bot(u, f"pb-{i}") for i, u in enumerate(users)]
    c = _create(staff, name="page cup", rules="Be nice.")
    board = client.get("/")
    assert b'href="/competitions/"' in board.content
    listing = client.get("/competitions/")
    assert b"page cup" in listing.content
    for user, bot in zip(users, bots, strict=True):
        client.force_login(user)
        page = client.get(f"/competitions/{c.pk}/")
        assert b'id="enter-form"' in page.content
        r = client.post(f"/competitions/{c.pk}/enter/", {"bot": bot.pk})
        assert r.status_code == 302, r.content[:500]
    r = client.post(f"/competitions/{c.pk}/enter/", {"bot": bots[-1].pk})
    assert r.status_code == 400 and b"already entered" in r.content
    at = timezone.now()
    competitions_tick(at + timedelta(seconds=61))
    competitions_tick(at + timedelta(seconds=121))
    competition = Competition.objects.get(pk=c.pk)
    page = client.get(f"/competitions/{c.pk}/")
    assert b'id="bracket"' in page.content and b"playing" in page.content
    strength = {b.pk: i for i, b in enumerate(bots)}
    for _ in range(20):
        if not _play_open(competition, strength):
            break
        final_advance(competition_id=competition.pk)
    page = client.get(f"/competitions/{c.pk}/")
    text = page.content.decode()
    assert 'id="competition-phase">finished' in text
    assert 'id="result"' in text and "pb-2" in text and "wins" in text
    # The page reads the row and a page of entries: the same queries however many deals.
    with CaptureQueriesContext(connection) as queries:
        client.get(f"/competitions/{c.pk}/")
    assert len(queries) < 15


def test_staff_announce_a_competition_in_the_admin(client: Any, make_user: Any) -> None:
    from django.contrib.auth.models import Permission

    staff = make_user("boss", staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename__endswith="competition"))
    client.force_login(staff)
    assert client.get("/admin/competitions/competition/add/").status_code == 200
    now = timezone.now()
    form = {
        "name": "admin cup",
        "rules": "Play well.",
        "entry": "open",
        "entry_opens_at_0": (now - timedelta(minutes=1)).strftime("%Y-%m-%d"),
        "entry_opens_at_1": (now - timedelta(minutes=1)).strftime("%H:%M:%S"),
        "freeze_at_0": (now + timedelta(hours=1)).strftime("%Y-%m-%d"),
        "freeze_at_1": (now + timedelta(hours=1)).strftime("%H:%M:%S"),
        "final_starts_at_0": (now + timedelta(hours=2)).strftime("%Y-%m-%d"),
        "final_starts_at_1": (now + timedelta(hours=2)).strftime("%H:%M:%S"),
        "entries_per_user": 1,
        "ladder": "dd-1",
        "format": "single_elimination",
        "seats": 3,  # refused: a knockout is played at 2 seats
        "confidence": 0.95,
        "min_deals": 2,
        "max_games": 500,
        "matchup_max_deals": 8,
        "group_max_deals": 8,
        "top": 4,
        "advance": 2,
        "first_stage": "swiss",
        "finalists": 4,
        "final_size": 8,
        "invitations-TOTAL_FORMS": 0,
        "invitations-INITIAL_FORMS": 0,
        "entries-TOTAL_FORMS": 0,
        "entries-INITIAL_FORMS": 0,
    }
    r = client.post("/admin/competitions/competition/add/", form)
    assert r.status_code == 200 and b"2 seats" in r.content
    form["seats"] = 2
    r = client.post("/admin/competitions/competition/add/", form)
    assert r.status_code == 302, r.content.decode()[-3000:]
    c = Competition.objects.get(name="admin cup")
    assert c.phase == Competition.Phase.ENTRY and c.created_by == staff


def test_a_signed_in_user_follows_a_competition_from_its_page(client: Any, make_user: Any) -> None:
    from ladder.competitions.models import CompetitionFollower

    staff = make_user("staff", staff=True)
    fan = make_user("fan")
    c = _create(staff, name="follow cup")
    page = client.get(f"/competitions/{c.pk}/")
    assert b'id="follow-form"' not in page.content  # signed out: no button
    r = client.post(f"/competitions/{c.pk}/follow/", {"follow": "1"})
    assert r.status_code == 302 and "/login" in r["Location"]
    assert not CompetitionFollower.objects.exists()
    client.force_login(fan)
    assert b'id="follow"' in client.get(f"/competitions/{c.pk}/").content
    r = client.post(f"/competitions/{c.pk}/follow/", {"follow": "1"}, follow=True)
    assert r.status_code == 200 and b"You follow this competition" in r.content
    assert b'id="unfollow"' in r.content
    assert list(CompetitionFollower.objects.values_list("user__username", flat=True)) == ["fan"]
    r = client.post(f"/competitions/{c.pk}/follow/", {"follow": "0"}, follow=True)
    assert b'id="follow"' in r.content and not CompetitionFollower.objects.exists()
    Competition.objects.filter(pk=c.pk).update(phase=Competition.Phase.FINISHED)
    assert b'id="follow-form"' not in client.get(f"/competitions/{c.pk}/").content
