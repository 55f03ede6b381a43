"""Services: recording exactly once, ratings history, versions, moderation, rerate."""

from __future__ import annotations

import gzip
import hashlib
from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.db import IntegrityError, transaction

from ladder.bots.models import Bot
from ladder.bots.services import (
    bot_create,
    bot_delete,
    bot_suspend,
    bot_unsuspend,
    bot_update,
    bot_version_smoke_record,
    bot_version_upload,
)
from ladder.common.exceptions import ApplicationError, Conflict, NotFound, PermissionDenied
from ladder.matches.claims import match_cancel, match_start
from ladder.matches.creation import match_create
from ladder.matches.models import Match, MatchResult, MatchSeat
from ladder.matches.recording import match_record_result
from ladder.ratings.models import BotRating
from tests.ladder.conftest import make_replay, make_result, record, standing, standings

pytestmark = pytest.mark.django_db


@pytest.fixture
def four(make_user: Any, make_bot: Any) -> tuple[Any, list[Bot]]:
    alice = make_user("alice")
    return alice, [make_bot(alice, f"bot-{i}") for i in range(4)]


def test_record_writes_result_seats_replay_and_ratings(four: Any) -> None:
    alice, bots = four
    match = match_create(bot_ids=[b.pk for b in bots], requested_by=alice)
    replay = make_replay(match.pk)
    out = match_record_result(
        match_id=match.pk, result=make_result([2, 1, 3, 4]), replay_bytes=replay
    )
    assert out.recorded
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    assert match.replay_sha256 == hashlib.sha256(replay).hexdigest()
    assert match.replay_size == len(replay)
    with default_storage.open(match.replay.name, "rb") as fh:
        assert fh.read() == replay
    seats = list(match.seats.order_by("seat"))
    assert [s.rank for s in seats] == [2, 1, 3, 4]
    assert all(s.rating_before == 150000 for s in seats)
    assert sum(s.rating_after - s.rating_before for s in seats) == 0
    assert seats[1].rating_after > 150000 > seats[3].rating_after
    for s in seats:
        assert standing(s.bot) == (s.rating_after, 1, int(s.rank == 1))
        assert s.result_id == out.match.result.pk


def test_second_call_changes_nothing(four: Any) -> None:
    alice, bots = four
    match = match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice)
    record(match, [1, 2])
    snapshot = standings()
    # A retry with a different result and replay is a no-op.
    again = match_record_result(
        match_id=match.pk, result=make_result([2, 1]), replay_bytes=make_replay(match.pk, "other")
    )
    assert not again.recorded
    assert standings() == snapshot
    assert MatchResult.objects.filter(match=match).count() == 1
    assert list(default_storage.listdir(f"replays/{match.pk}")[1]) == [
        f"{Match.objects.get(pk=match.pk).replay_sha256}.json.gz"
    ]


def test_seat_logs_are_written_with_the_result_and_kept_by_the_recording_that_counted(
    four: Any,
) -> None:
    alice, bots = four
    match = match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice)
    out = match_record_result(
        match_id=match.pk,
        result=make_result([1, 2]),
        replay_bytes=make_replay(match.pk),
        seat_logs={0: b"first attempt, seat 0\n", 1: b"first attempt, seat 1\n"},
    )
    assert out.recorded and not out.seats_failed
    seats = list(MatchSeat.objects.filter(match=match).order_by("seat"))
    kept = [s.log.name for s in seats]
    for s in seats:
        with default_storage.open(s.log.name, "rb") as fh:
            assert fh.read() == f"first attempt, seat {s.seat}\n".encode()
        assert s.log_size == len(f"first attempt, seat {s.seat}\n")
    # A second delivery's logs are neither kept nor left behind as files.
    again = match_record_result(
        match_id=match.pk,
        result=make_result([2, 1]),
        replay_bytes=make_replay(match.pk),
        seat_logs={0: b"second\n", 1: b"second\n"},
    )
    assert not again.recorded
    assert [s.log.name for s in MatchSeat.objects.filter(match=match).order_by("seat")] == kept
    assert sorted(default_storage.listdir(f"logs/matches/{match.pk}")[1]) == sorted(
        name.rsplit("/", 1)[1] for name in kept
    )


def test_database_refuses_a_second_result_row(four: Any) -> None:
    alice, bots = four
    match = match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice)
    record(match, [1, 2])
    with pytest.raises(IntegrityError), transaction.atomic():
        MatchResult.objects.create(match=match, reason="won", winner=0, data={}, elo_k=32)


def test_cancelled_match_refuses_result(four: Any, make_user: Any) -> None:
    alice, bots = four
    staff = make_user("mod", staff=True)
    match = match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice)
    with pytest.raises(PermissionDenied):
        match_cancel(match_id=match.pk, user=alice)
    match_cancel(match_id=match.pk, user=staff, reason="test")
    with pytest.raises(Conflict):
        record(match, [1, 2])
    assert not MatchResult.objects.exists()
    assert standing(bots[0]) == (150000, 0, 0)


@pytest.mark.parametrize(
    "result, message",
    [
        ({"reason": "won", "winner": 0, "ranks": [1]}, "one rank per seat"),
        ({"reason": "won", "winner": 0, "ranks": [1, 5]}, "between 1 and 2"),
        ({"reason": "nope", "winner": 0, "ranks": [1, 2]}, "reason must be"),
        ({"reason": "won", "winner": 7, "ranks": [1, 2]}, "winner"),
        ({"reason": "won", "winner": 0, "ranks": [1, "2"]}, "integer"),
    ],
)
def test_bad_result_is_rejected_and_nothing_changes(four: Any, result: Any, message: str) -> None:
    alice, bots = four
    match = match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice)
    with pytest.raises(ApplicationError, match=message):
        match_record_result(match_id=match.pk, result=result, replay_bytes=make_replay(match.pk))
    assert Match.objects.get(pk=match.pk).status == Match.Status.QUEUED
    assert not default_storage.exists(f"replays/{match.pk}")


@pytest.mark.parametrize(
    "replay, message",
    [
        (b"", "empty"),
        (b'{"not": "gzip"}', "gzip"),
        (gzip.compress(b"{}" * 1000, mtime=0)[:-12], "truncated"),
    ],
)
def test_bad_replay_is_rejected(four: Any, replay: bytes, message: str) -> None:
    alice, bots = four
    match = match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice)
    with pytest.raises(ApplicationError, match=message):
        match_record_result(match_id=match.pk, result=make_result([1, 2]), replay_bytes=replay)
    assert Match.objects.get(pk=match.pk).status == Match.Status.QUEUED


def test_unrated_match_stores_equal_before_after(four: Any) -> None:
    alice, bots = four
    match = match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice, rated=False)
    record(match, [1, 2])
    for seat in match.seats.all():
        assert seat.rating_before == seat.rating_after == 150000
        assert standing(seat.bot) == (150000, 0, 0)


def test_new_version_keeps_rating_and_history(four: Any) -> None:
    alice, bots = four
    match = match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice)
    record(match, [1, 2])
    before = standing(bots[0])
    v2 = bot_version_upload(user=alice, bot_id=bots[0].pk, filename="b.py", data=b"x = 2\n")
    assert v2.number == 2
    v1 = Bot.objects.get(pk=bots[0].pk).current_version
    assert v1 is not None and v1.number == 1  # a pending upload does not play yet
    bot_version_smoke_record(version_id=v2.pk, passed=True, outcome="passed", log=b"")
    bot = Bot.objects.get(pk=bots[0].pk)
    assert standing(bot) == before and before[1] == 1
    assert bot.current_version == v2
    assert list(bot.versions.values_list("number", flat=True)) == [2, 1]
    assert match.seats.get(bot=bot).version.number == 1


def test_only_owner_changes_staff_moderates(four: Any, make_user: Any) -> None:
    alice, bots = four
    mallory = make_user("mallory")
    staff = make_user("mod", staff=True)
    with pytest.raises(PermissionDenied):
        bot_update(user=mallory, bot_id=bots[0].pk, description="pwned")
    with pytest.raises(PermissionDenied):
        bot_delete(user=staff, bot_id=bots[0].pk)
    with pytest.raises(PermissionDenied):
        bot_suspend(user=alice, bot_id=bots[0].pk, reason="self")
    bot = bot_suspend(user=staff, bot_id=bots[0].pk, reason="crashes every game")
    assert not bot.is_active and bot.suspended_reason == "crashes every game"
    with pytest.raises(Conflict, match="not active"):
        match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice)
    assert bot_unsuspend(user=staff, bot_id=bots[0].pk).is_active


def test_challenge_needs_own_bot(four: Any, make_user: Any) -> None:
    _, bots = four
    bob = make_user("bob")
    with pytest.raises(PermissionDenied):
        match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=bob)
    with pytest.raises(ApplicationError, match="two seats"):
        match_create(bot_ids=[bots[0].pk, bots[0].pk])
    with pytest.raises(NotFound):
        match_create(bot_ids=[bots[0].pk, 999999])


def test_delete_retires_a_bot_that_played(four: Any) -> None:
    alice, bots = four
    fresh = bot_create(owner=alice, name="fresh", kind="hosted")
    assert bot_delete(user=alice, bot_id=fresh.pk) is True
    assert not Bot.objects.filter(pk=fresh.pk).exists()
    match = match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice)
    record(match, [1, 2])
    assert bot_delete(user=alice, bot_id=bots[0].pk) is False
    bot = Bot.objects.get(pk=bots[0].pk)
    assert bot.retired_at is not None and not bot.is_active


def test_bot_names_unique_case_insensitively(make_user: Any) -> None:
    alice = make_user("alice")
    bot_create(owner=alice, name="Digger", kind="hosted")
    with pytest.raises(Conflict):
        bot_create(owner=alice, name="digger", kind="remote")
    with pytest.raises(ApplicationError, match="3-32"):
        bot_create(owner=alice, name="../x", kind="hosted")


def test_match_start_claims_once(four: Any) -> None:
    alice, bots = four
    match = match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice)
    started = match_start(match_id=match.pk, worker="w1")
    assert started.status == Match.Status.RUNNING and started.attempts == 1
    with pytest.raises(Conflict):
        match_start(match_id=match.pk, worker="w2")
    record(match, [2, 1])
    assert Match.objects.get(pk=match.pk).status == Match.Status.FINISHED


def test_rerate_check_passes_then_detects_tampering(four: Any, capsys: Any) -> None:
    alice, bots = four
    ids = [b.pk for b in bots]
    for ranks, seats in [
        ([1, 2, 3, 4], ids),
        ([2, 1], ids[:2]),
        ([1, 1, 2], ids[1:]),
        ([3, 1, 2], ids[:3]),
    ]:
        record(match_create(bot_ids=seats, requested_by=alice), ranks)
    assert sum(r for _, r, _, _ in standings()) == 4 * 150000
    good = standings()
    call_command("rerate", "--check")
    assert "dd-1: 4 results replayed, 4 bots rated, 0 mismatches found" in capsys.readouterr().out
    BotRating.objects.filter(bot_id=ids[0]).update(rating=123, wins=9)
    seat = MatchSeat.objects.filter(result__isnull=False).order_by("result_id").last()
    MatchSeat.objects.filter(pk=seat.pk).update(rating_after=7)
    with pytest.raises(SystemExit) as exc:
        call_command("rerate", "--check")
    assert exc.value.code == 1
    out = capsys.readouterr().out
    assert "bot bot-0: stored rating 123 games 3 wins 9" in out
    assert f"match {seat.match_id} seat {seat.seat}" in out and "2 mismatches found" in out
    call_command("rerate")
    assert standings() == good
    assert MatchSeat.objects.get(pk=seat.pk).rating_after == seat.rating_after
    call_command("rerate", "--check")
    assert "0 mismatches" in capsys.readouterr().out.splitlines()[-1]


def test_half_written_replay_file_is_not_reused(four: Any) -> None:
    """A partial file under the content-addressed name (a concurrent writer) is never referenced."""
    from django.core.files.base import ContentFile

    from ladder.matches.replays import replay_name

    alice, bots = four
    match = match_create(bot_ids=[bots[0].pk, bots[1].pk], requested_by=alice)
    replay = make_replay(match.pk)
    digest = hashlib.sha256(replay).hexdigest()
    default_storage.save(replay_name(match.pk, digest), ContentFile(replay[:10]))
    record(match, [1, 2])
    match.refresh_from_db()
    assert match.replay.name != replay_name(match.pk, digest)
    with default_storage.open(match.replay.name, "rb") as fh:
        assert hashlib.sha256(fh.read()).hexdigest() == match.replay_sha256 == digest


def test_provisional_flips_at_the_configured_game_count(settings: Any) -> None:
    from ladder.ratings.selectors import rating_uncertainty

    settings.LADDER_PROVISIONAL_GAMES = 10
    assert rating_uncertainty(rating=150000, games=0).interval95 is None
    assert rating_uncertainty(rating=150000, games=9).provisional
    u = rating_uncertainty(rating=150000, games=10)
    assert not u.provisional
    lo, hi = u.interval95
    assert round(hi - 1500) == round(1500 - lo) == 215
