"""The matchmaker service and auto-suspend on the database (SQLite and PostgreSQL).

The planner's properties are tests/ladder/matchmaking/test_planner.py; here: what the
service reads (who is eligible), what it writes (matches up to the target,
never same-owner, never past a bot's concurrent limit), overlapping passes
from several OS processes, and auto-suspend from recorded results through
REST with who may lift it. Played by real workers: tests/workers/cluster/test_matchmaking.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.test import TestCase

from digdown.results import GameResult
from ladder.bots.models import Bot
from ladder.bots.services import (
    bot_auto_suspend,
    bot_suspend,
    bot_unsuspend,
    bot_version_smoke_record,
    bot_version_upload,
)
from ladder.common.exceptions import ApplicationError, PermissionDenied
from ladder.finishing.services import match_finish
from ladder.matches.creation import match_create
from ladder.matches.models import Match, MatchSeat
from ladder.matchmaking.services import matchmake
from tests.ladder.conftest import make_replay, make_result, record
from tests.support.database import database_url

ROOT = Path(__file__).resolve().parents[3]
OPEN = (Match.Status.QUEUED, Match.Status.RUNNING)


@pytest.fixture(autouse=True)
def _matchmaker_settings(settings: Any) -> None:
    settings.LADDER_MATCHMAKER_LADDERS = []  # the default ladder (dd-1 here)
    settings.LADDER_MATCHMAKER_SEATS = "2:2,3:1,4:1"
    settings.LADDER_MATCHMAKER_MAX_CONCURRENT = 2
    settings.LADDER_SUSPEND_WINDOW = 10
    settings.LADDER_SUSPEND_CONSECUTIVE = 3
    settings.LADDER_SUSPEND_FORFEITS = 5
    settings.LADDER_SUSPEND_FAULTS = 20


def _world(make_user: Any, make_bot: Any, owners: int = 4, per_owner: int = 2) -> list[Bot]:
    bots = []
    for o in range(owners):
        user = make_user(f"owner{o}")
        bots += [make_bot(user, f"mm-{o}-{b}") for b in range(per_owner)]
    return bots


def _check_open(max_concurrent: int = 2) -> list[Match]:
    """Open matches: no same-owner table, no bot past its limit; returned for more checks."""
    matches = list(Match.objects.filter(status__in=OPEN).prefetch_related("seats__bot"))
    busy: Counter[int] = Counter()
    for match in matches:
        owners = [s.bot.owner_id for s in match.seats.all()]
        assert len(set(owners)) == len(owners), f"same-owner table in {match.pk}"
        busy.update(s.bot_id for s in match.seats.all())
    assert all(n <= max_concurrent for n in busy.values()), busy
    return matches


def test_fills_to_target_and_no_further(make_user: Any, make_bot: Any) -> None:
    _world(make_user, make_bot)
    [report] = matchmake(target=3, seed=7)
    assert report.open_before == 0 and len(report.created) == 3 and report.eligible == 8
    matches = _check_open()
    assert len(matches) == 3
    assert all(m.ladder == "dd-1" and m.rated and m.requested_by is None for m in matches)
    assert all(2 <= m.seats.count() <= 4 for m in matches)
    [again] = matchmake(target=3, seed=8)
    assert again.created == [] and again.open_before == 3
    assert "3 open of 3, nothing to do" in again.line()
    # A finished match frees one place: exactly one more is created.
    record(matches[0], list(range(1, matches[0].seats.count() + 1)))
    [third] = matchmake(target=3, seed=9)
    assert len(third.created) == 1
    assert Match.objects.filter(status__in=OPEN).count() == 3


def test_the_same_seed_plans_the_same_tables(make_user: Any, make_bot: Any) -> None:
    _world(make_user, make_bot)
    [first] = matchmake(target=4, seed=42)
    Match.objects.update(status=Match.Status.CANCELLED)
    [second] = matchmake(target=4, seed=42)
    # Cancelled matches do not count as recent games, so the inputs were the same.
    assert first.tables == second.tables


def test_bot_limit_bounds_what_is_created(make_user: Any, make_bot: Any, settings: Any) -> None:
    _world(make_user, make_bot, owners=2, per_owner=1)
    settings.LADDER_MATCHMAKER_MAX_CONCURRENT = 1
    [report] = matchmake(target=5, seed=1)
    assert len(report.created) == 1  # two bots, one match each at most
    _check_open(max_concurrent=1)


def test_only_playable_bots_are_seated(make_user: Any, make_bot: Any) -> None:
    bots = _world(make_user, make_bot, owners=3, per_owner=2)
    staff = make_user("staff", staff=True)
    bot_suspend(user=staff, bot_id=bots[0].pk, reason="abuse")
    bot_auto_suspend(bot_id=bots[2].pk, reason="forfeited its last 3 matches")
    pending = Bot.objects.create(owner=bots[4].owner, name="mm-pending", kind="hosted")
    bot_version_upload(user=bots[4].owner, bot_id=pending.pk, filename="b.py", data=b"x = 1\n")
    excluded = {bots[0].pk, bots[2].pk, pending.pk}
    for seed in range(30):
        matchmake(target=6, seed=seed)
        _check_open()
        for match in Match.objects.filter(status__in=OPEN):
            record(match, list(range(1, match.seats.count() + 1)))
    seated = set(MatchSeat.objects.values_list("bot_id", flat=True))
    assert seated == {b.pk for b in bots} - excluded


@pytest.mark.sqlite_too  # an advisory lock on PostgreSQL, the write lock on SQLite
@pytest.mark.django_db(transaction=True)
def test_overlapping_passes_never_overshoot(make_user: Any, make_bot: Any, tmp_path: Path) -> None:
    """Four ``manage.py matchmake`` processes at once: the target and the limits hold."""
    _world(make_user, make_bot, owners=5, per_owner=2)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "DATABASE_URL": database_url(),
        "LADDER_MEDIA_ROOT": django_settings.MEDIA_ROOT,
        "LADDER_LADDERS": "dd-1=dd-1/normal/2-4",
        "LADDER_DEFAULT_LADDER": "dd-1",
        "LADDER_MATCHMAKER_MAX_CONCURRENT": "3",
        "LADDER_BROKER_DIR": str(tmp_path / "broker"),
        "CELERY_BROKER_URL": "",
        "REDIS_URL": "",
        "PYTHONPATH": str(ROOT),
    }
    cmd = [sys.executable, str(ROOT / "manage.py"), "matchmake", "--target", "7"]
    procs = [
        subprocess.Popen([*cmd, "--seed", str(i)], env=env, stdout=subprocess.PIPE, text=True)
        for i in range(4)
    ]
    outs = [p.communicate(timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert Match.objects.filter(status__in=OPEN).count() == 7, outs
    _check_open(max_concurrent=3)
    created = [
        int(o.split("created ")[1].split(":")[0].split(" ")[0]) for o in outs if "created" in o
    ]
    assert sum(created) == 7, outs
    assert sum("7 open of 7, nothing to do" in o for o in outs) >= 1, outs


def _forfeit(match: Match, bot: Bot) -> None:
    """Record ``match`` with ``bot`` forfeiting (ranked last), the others finishing."""
    seats = list(match.seats.order_by("seat"))
    n = len(seats)
    ranks = [n if s.bot_id == bot.pk else 1 + sum(1 for t in seats[:i] if t.bot_id != bot.pk)
             for i, s in enumerate(seats)]  # fmt: skip
    result = make_result(ranks)
    for seat, info in zip(seats, result["seats"], strict=True):
        if seat.bot_id == bot.pk:
            info.update(ended="forfeited", faults=3, reason="unreachable: connection refused")
    # What follows the recording (auto-suspend) runs on its commit: the test's transaction
    # stands in for it.
    with TestCase.captureOnCommitCallbacks(execute=True):
        match_finish(
            match_id=match.pk,
            result=GameResult.from_dict(result),
            replay_bytes=make_replay(match.pk),
        )


def test_repeated_forfeits_suspend_and_the_owner_or_a_new_version_lifts(
    make_user: Any, make_bot: Any, api: Any
) -> None:
    bots = _world(make_user, make_bot, owners=2, per_owner=1)
    bad, good = bots
    for i in range(2):
        _forfeit(match_create(bot_ids=[bad.pk, good.pk]), bad)
        assert Bot.objects.get(pk=bad.pk).is_active, f"suspended after {i + 1} forfeits"
    queued = match_create(bot_ids=[good.pk, bad.pk])
    _forfeit(match_create(bot_ids=[bad.pk, good.pk]), bad)
    bad.refresh_from_db()
    assert not bad.is_active and bad.suspension == Bot.Suspension.AUTO
    assert bad.suspended_reason.startswith("automatically suspended: forfeited its last 3")
    assert "unreachable: connection refused" in bad.suspended_reason
    assert Bot.objects.get(pk=good.pk).is_active
    queued.refresh_from_db()
    assert queued.status == Match.Status.CANCELLED and "suspended" in queued.error
    # The owner sees it over REST, and lifts it.
    api.force_authenticate(bad.owner)
    shown = api.get(f"/api/v1/bots/{bad.pk}/").json()
    assert (shown["is_active"], shown["suspension"]) == (False, "auto")
    assert "forfeited its last 3" in shown["suspended_reason"]
    lifted = api.post(f"/api/v1/bots/{bad.pk}/unsuspend/").json()
    assert (lifted["is_active"], lifted["suspension"], lifted["suspended_reason"]) == (True, "", "")
    # A clean slate: one more forfeit does not suspend it again at once.
    _forfeit(match_create(bot_ids=[bad.pk, good.pk]), bad)
    assert Bot.objects.get(pk=bad.pk).is_active
    for _ in range(2):
        _forfeit(match_create(bot_ids=[bad.pk, good.pk]), bad)
    assert not Bot.objects.get(pk=bad.pk).is_active
    # A new valid version lifts it too.
    version = bot_version_upload(
        user=bad.owner, bot_id=bad.pk, filename="bot.py", data=b"def act(o):\n    return 0\n"
    )
    assert not Bot.objects.get(pk=bad.pk).is_active, "a pending version does not lift it"
    bot_version_smoke_record(version_id=version.pk, passed=True, outcome="passed", log=b"")
    bad.refresh_from_db()
    assert bad.is_active and bad.suspension == "" and bad.current_version_id == version.pk


def test_staff_suspension_is_lifted_by_staff_only(make_user: Any, make_bot: Any, api: Any) -> None:
    [bot] = _world(make_user, make_bot, owners=1, per_owner=1)
    staff = make_user("staff", staff=True)
    bot_suspend(user=staff, bot_id=bot.pk, reason="collusion")
    api.force_authenticate(bot.owner)
    refused = api.post(f"/api/v1/bots/{bot.pk}/unsuspend/")
    assert refused.status_code == 403 and "only staff" in refused.json()["detail"]
    assert bot_auto_suspend(bot_id=bot.pk, reason="x") is False, "a staff suspension stays staff's"
    version = bot_version_upload(
        user=bot.owner, bot_id=bot.pk, filename="bot.py", data=b"def act(o):\n    return 1\n"
    )
    bot_version_smoke_record(version_id=version.pk, passed=True, outcome="passed", log=b"")
    bot.refresh_from_db()
    assert not bot.is_active and bot.suspension == Bot.Suspension.STAFF
    other = make_user("someone")
    with pytest.raises(PermissionDenied):
        bot_unsuspend(user=other, bot_id=bot.pk)
    assert bot_unsuspend(user=staff, bot_id=bot.pk).is_active


def test_faults_alone_suspend_past_their_threshold(
    make_user: Any, make_bot: Any, settings: Any
) -> None:
    settings.LADDER_SUSPEND_FAULTS = 5
    bad, good = _world(make_user, make_bot, owners=2, per_owner=1)
    for expected_active in (True, True, False):
        match = match_create(bot_ids=[bad.pk, good.pk])
        result = make_result([2, 1])
        result["seats"][0]["faults"] = 2
        with TestCase.captureOnCommitCallbacks(execute=True):
            match_finish(
                match_id=match.pk,
                result=GameResult.from_dict(result),
                replay_bytes=make_replay(match.pk),
            )
        assert Bot.objects.get(pk=bad.pk).is_active is expected_active
    assert "made 6 faults in its last 3 matches" in Bot.objects.get(pk=bad.pk).suspended_reason


def test_the_command_prints_one_line_per_ladder(make_user: Any, make_bot: Any, capsys: Any) -> None:
    _world(make_user, make_bot)
    call_command("matchmake", "--target", "2", "--seed", "5")
    out = capsys.readouterr().out
    assert out.startswith("matchmaker dd-1: 0 open of 2, 8 eligible bots, created 2: ")
    assert "(seed 5)" in out


def test_duplicate_sets_rotate_one_cave_within_the_limits(
    make_user: Any, make_bot: Any, settings: Any
) -> None:
    _world(make_user, make_bot, owners=4, per_owner=2)
    settings.LADDER_MATCHMAKER_DUPLICATES = "on"
    settings.LADDER_MATCHMAKER_MAX_CONCURRENT = 3
    [report] = matchmake(target=8, seed=11)
    assert report.deals and len(report.created) <= 8
    assert f"duplicate sets: deals {report.deals}" in report.line()
    matches = _check_open(max_concurrent=3)
    assert len(matches) == len(report.created)
    for deal_id in report.deals:
        rotated = list(Match.objects.filter(deal_id=deal_id).order_by("deal_rotation"))
        tables = [list(m.seats.order_by("seat").values_list("bot_id", flat=True)) for m in rotated]
        n = len(tables[0])
        assert len(rotated) == n and len({m.seed for m in rotated}) == 1
        assert all(m.ladder == "dd-1" and m.requested_by is None for m in rotated)
        for bot in tables[0]:  # every bot plays every seat of the same cave once
            assert sorted(t.index(bot) for t in tables) == list(range(n))
    settings.LADDER_MATCHMAKER_DUPLICATES = "sometimes"
    with pytest.raises(ApplicationError, match="off, on or a share"):
        matchmake(target=9)


def test_only_recent_games_count(make_user: Any, make_bot: Any) -> None:
    """Games older than LADDER_MATCHMAKER_RECENT_H do not count; recent open or finished do."""
    from datetime import timedelta

    from django.utils import timezone

    from ladder.matchmaking.selectors import matchmaking_candidates

    a, b, c = _world(make_user, make_bot, owners=3, per_owner=1)
    old = match_create(bot_ids=[a.pk, b.pk])
    record(old, [1, 2])
    Match.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(hours=30))
    record(match_create(bot_ids=[a.pk, c.pk]), [1, 2])
    match_create(bot_ids=[a.pk, b.pk])  # open
    cancelled = match_create(bot_ids=[b.pk, c.pk])
    Match.objects.filter(pk=cancelled.pk).update(status=Match.Status.CANCELLED)
    since = timezone.now() - timedelta(hours=24)
    seen = {x.bot_id: (x.recent_games, x.active_matches) for x in matchmaking_candidates(
        ladder="dd-1", recent_since=since)}  # fmt: skip
    assert seen == {a.pk: (2, 1), b.pk: (1, 1), c.pk: (1, 0)}
