"""Competitions through the services on the database: entry and its quota, phases moved
at their times exactly once (concurrent ticks), the freeze's locked versions, a knockout
final played to its end, private tournaments."""

from __future__ import annotations

import threading
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone

from ladder.bots.models import Bot
from ladder.bots.services import bot_version_smoke_record, bot_version_upload
from ladder.common.exceptions import ApplicationError, Conflict, PermissionDenied, QuotaExceeded
from ladder.competitions import services
from ladder.competitions.models import Competition, FinalDeal
from ladder.matches.creation import OPEN_STATES
from ladder.matches.models import Match, MatchSeat
from tests.ladder.conftest import record

pytestmark = pytest.mark.django_db

Phase = Competition.Phase


def _times(entry: int = -3, freeze: int = 60, final: int = 120) -> dict[str, Any]:
    now = timezone.now()
    return {
        "entry_opens_at": now + timedelta(seconds=entry),
        "freeze_at": now + timedelta(seconds=freeze),
        "final_starts_at": now + timedelta(seconds=final),
    }


def _create(staff: Any, **fields: Any) -> Competition:
    base = {
        "name": "cup",
        "rules": "Two seats, dd-2.",
        "ladder": "dd-1",
        "format": "single_elimination",
        "seats": 2,
        "final_size": 4,
        "min_deals": 1,
        "matchup_max_deals": 3,
        **_times(),
    }
    base.update(fields)
    return services.competition_create(user=staff, **base)


def _new_version(bot: Bot) -> int:
    version = bot_version_upload(
        user=bot.owner, bot_id=bot.pk, filename="bot.py", data=b"def act(obs):\n    return 1\n"
    )
    bot_version_smoke_record(version_id=version.pk, passed=True, outcome="passed", log=b"")
    return version.pk


def _play_open(competition: Competition, strength: dict[int, int]) -> int:
    """Record every open match of the final: the stronger bot ranks first."""
    played = 0
    deals = FinalDeal.objects.filter(competition=competition, deal__isnull=False)
    for match in Match.objects.filter(deal__in=deals.values("deal"), status__in=OPEN_STATES):
        bots = list(match.seats.order_by("seat").values_list("bot_id", flat=True))
        order = sorted(bots, key=lambda b: -strength[b])
        record(match, [order.index(b) + 1 for b in bots])
        played += 1
    return played


@pytest.fixture
def people(make_user: Any, make_bot: Any) -> dict[str, Any]:
    staff = make_user("staff", staff=True)
    users = [make_user(f"u{i}") for i in range(4)]
    bots = [make_bot(u, f"b-{i}") for i, u in enumerate(users)]
    return {"staff": staff, "users": users, "bots": bots}


def test_only_staff_create_and_bad_input_is_refused(people: dict[str, Any]) -> None:
    with pytest.raises(PermissionDenied):
        _create(people["users"][0])
    with pytest.raises(ApplicationError, match="freeze"):
        _create(people["staff"], **_times(entry=100, freeze=50))
    with pytest.raises(ApplicationError, match="2 seats"):
        _create(people["staff"], seats=3)
    c = _create(people["staff"])
    assert c.phase == Phase.ENTRY  # its entry time had come: opened at once
    with pytest.raises(Conflict):
        _create(people["staff"])


def test_entry_quota_owner_and_window(people: dict[str, Any], make_bot: Any) -> None:
    users, bots = people["users"], people["bots"]
    c = _create(people["staff"], entries_per_user=1)
    services.competition_enter(user=users[0], competition_id=c.pk, bot_id=bots[0].pk)
    second = make_bot(users[0], "b-0-second")
    with pytest.raises(Conflict, match="at most 1"):
        services.competition_enter(user=users[0], competition_id=c.pk, bot_id=second.pk)
    with pytest.raises(PermissionDenied):
        services.competition_enter(user=users[0], competition_id=c.pk, bot_id=bots[1].pk)
    later = _create(people["staff"], name="later", **_times(entry=3600, freeze=7200, final=9000))
    assert later.phase == Phase.ANNOUNCED
    with pytest.raises(Conflict, match="not open"):
        services.competition_enter(user=users[1], competition_id=later.pk, bot_id=bots[1].pk)


def test_invitation_only(people: dict[str, Any]) -> None:
    users, bots = people["users"], people["bots"]
    c = _create(people["staff"], entry=Competition.Entry.INVITATION)
    with pytest.raises(PermissionDenied, match="invitation"):
        services.competition_enter(user=users[0], competition_id=c.pk, bot_id=bots[0].pk)
    services.competition_invite(user=people["staff"], competition_id=c.pk, username="u0")
    services.competition_enter(user=users[0], competition_id=c.pk, bot_id=bots[0].pk)


def test_a_whole_knockout_competition(people: dict[str, Any]) -> None:
    users, bots = people["users"], people["bots"]
    c = _create(people["staff"])
    for user, bot in zip(users, bots, strict=True):
        services.competition_enter(user=user, competition_id=c.pk, bot_id=bot.pk)
    frozen_versions = {b.pk: Bot.objects.get(pk=b.pk).current_version_id for b in bots}
    now = timezone.now()
    services.competitions_tick(now + timedelta(seconds=61))  # the freeze
    c.refresh_from_db()
    assert c.phase == Phase.FROZEN
    later = _new_version(bots[0])  # after the freeze: the ladder plays it, the final not
    assert Bot.objects.get(pk=bots[0].pk).current_version_id == later
    with pytest.raises(Conflict, match="not open"):
        services.competition_enter(user=users[0], competition_id=c.pk, bot_id=bots[0].pk)
    services.competitions_tick(now + timedelta(seconds=121))  # the final starts
    c.refresh_from_db()
    assert c.phase == Phase.FINAL and c.deals_open > 0
    strength = {b.pk: i for i, b in enumerate(bots)}  # b-3 is the strongest
    for _ in range(30):
        if not _play_open(c, strength):
            break
        services.final_advance(competition_id=c.pk)
        c.refresh_from_db()
    assert c.phase == Phase.FINISHED
    seats = MatchSeat.objects.filter(match__deal__competition_deal__competition=c)
    assert seats.exists()
    for bot_id, version_id in seats.values_list("bot_id", "version_id"):
        assert version_id == frozen_versions[bot_id]  # never the upload after the freeze
    places = dict(c.entries.values_list("bot_id", "place"))
    assert places[bots[3].pk] == 1 and places[bots[2].pk] == 2
    assert c.result["places"][0]["bot"] == bots[3].pk
    assert c.final_view[0]["kind"] == "single_elimination"
    assert (
        Match.objects.filter(deal__competition_deal__competition=c, priority=2).count() == c.games
    )


@pytest.mark.django_db(transaction=True)
def test_concurrent_ticks_move_each_phase_once(people: dict[str, Any]) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("row locks need PostgreSQL")
    users, bots = people["users"], people["bots"]
    c = _create(people["staff"])
    for user, bot in zip(users, bots, strict=True):
        services.competition_enter(user=user, competition_id=c.pk, bot_id=bot.pk)
    reports: list[dict[str, list[int]]] = []
    at = timezone.now() + timedelta(seconds=121)
    barrier = threading.Barrier(4)

    def tick() -> None:
        try:
            barrier.wait(timeout=10)
            reports.append(services.competitions_tick(at))
        finally:
            connection.close()

    threads = [threading.Thread(target=tick) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sum(len(r["frozen"]) for r in reports) == 1
    assert sum(len(r["final"]) for r in reports) == 1
    c.refresh_from_db()
    assert c.phase == Phase.FINAL
    # 4 seeds, one deal a match-up: the two semi-finals, created once.
    assert FinalDeal.objects.filter(competition=c).count() == 2


def test_private_tournament_with_an_invited_bot(
    people: dict[str, Any], make_bot: Any, settings: Any
) -> None:
    users, bots = people["users"], people["bots"]
    mine = [bots[0], make_bot(users[0], "b-0-two")]
    c = services.private_tournament_create(
        user=users[0],
        name="friends",
        bot_ids=[b.pk for b in mine],
        format="round_robin",
        ladder="dd-1",
        min_deals=1,
        top=2,
        max_games=12,
    )
    assert c.private and c.phase == Phase.ENTRY
    with pytest.raises(PermissionDenied):
        services.private_tournament_create(
            user=users[0], name="x", bot_ids=[bots[1].pk], format="round_robin", ladder="dd-1"
        )
    invitation = services.private_invite(user=users[0], competition_id=c.pk, bot_id=bots[1].pk)
    with pytest.raises(Exception):  # noqa: B017 - someone else cannot accept it
        services.private_invitation_accept(user=users[2], invitation_id=invitation.pk)
    services.private_invitation_accept(user=users[1], invitation_id=invitation.pk)
    c = services.private_tournament_start(user=users[0], competition_id=c.pk)
    assert c.phase == Phase.FINAL
    priorities = set(
        Match.objects.filter(deal__competition_deal__competition=c).values_list(
            "priority", flat=True
        )
    )
    assert priorities == {services.PRIVATE_PRIORITY}
    settings.LADDER_QUOTA_PRIVATE_TOURNAMENTS_PER_DAY = 1
    with pytest.raises(QuotaExceeded):
        services.private_tournament_create(
            user=users[0],
            name="again",
            bot_ids=[mine[0].pk, mine[1].pk],
            format="round_robin",
            ladder="dd-1",
        )
