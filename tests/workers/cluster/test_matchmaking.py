"""The ladder keeps itself busy: beat runs the matchmaker, real workers play what it makes.

A real ``celery worker`` with beat (the ``matchmake`` task every second), a
real engine and real remote house bots of three owners, plus a bot of a fourth
owner that answers every decision with an error. Nobody requests a match: the
matchmaker keeps the target open, the workers play them, ratings move, no table
ever seats two bots of one owner. The failing bot forfeits its matches until it
is suspended automatically; from then on it is not seated; a new endpoint (a
new version) lifts the suspension and it is seated again, and plays.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.db.models import Max

from ladder.accounts.models import User
from ladder.bots.models import Bot
from ladder.bots.services import bot_create, bot_set_endpoint, bot_suspend
from ladder.matches.models import Match, MatchSeat
from ladder.ratings.models import BotRating
from tests.support.processes import Proc, start_bot
from tests.support.workers import wait_until

MATCHMAKER = {
    "LADDER_MATCHMAKER_TARGET": "3",
    "LADDER_MATCHMAKER_INTERVAL_S": "1",
    "LADDER_MATCHMAKER_MAX_CONCURRENT": "2",
    "LADDER_SUSPEND_CONSECUTIVE": "3",
}


def _finished_after(match_id: int) -> list[Match]:
    return list(Match.objects.filter(pk__gt=match_id, status="finished"))


def test_beat_matchmaker_plays_the_ladder_and_suspends_a_crashing_bot(
    make_cluster: Any, cluster_bots: dict[str, Proc], tmp_path: Path
) -> None:
    cluster = make_cluster("redis")
    staff = User.objects.create_user(username="staff", password="pw-12345678", is_staff=True)
    for pk in cluster.bots.values():  # the cluster's own bots (one owner) sit this one out
        bot_suspend(user=staff, bot_id=pk, reason="not in this test")
    crasher_proc = start_bot("raw_bot.py", tmp_path, "crasher", "--mode", "raise")
    try:
        owners = [
            User.objects.create_user(username=f"o{i}", password="pw-12345678") for i in range(4)
        ]
        house = [
            bot_create(
                owner=owners[i % 3],
                name=f"house{i}",
                kind="remote",
                endpoint=cluster_bots[f"rand{i % 4}"].address,
            )
            for i in range(6)
        ]
        crasher = bot_create(
            owner=owners[3], name="crasher", kind="remote", endpoint=crasher_proc.address
        )
        cluster.start_worker(concurrency=2, beat=True, **MATCHMAKER)

        def suspended() -> bool:
            return not Bot.objects.get(pk=crasher.pk).is_active

        wait_until(suspended, 240, "the crashing bot suspended automatically", poll_s=0.5)
        crasher.refresh_from_db()
        assert crasher.suspension == Bot.Suspension.AUTO
        assert crasher.suspended_reason.startswith("automatically suspended: forfeited its last 3")
        forfeits = MatchSeat.objects.filter(bot=crasher, ended="forfeited").count()
        assert forfeits >= 3
        # From now on it is never seated: the next matches are between the house bots.
        last = Match.objects.aggregate(m=Max("pk"))["m"]
        wait_until(lambda: len(_finished_after(last)) >= 6, 240, "six more matches played")
        later = MatchSeat.objects.filter(match_id__gt=last)
        assert not later.filter(bot=crasher).exists()
        # Ratings moved, and every match the matchmaker made was played and rated.
        ladder = settings.LADDER_DEFAULT_LADDER
        ratings = dict(
            BotRating.objects.filter(ladder=ladder, bot__in=house).values_list("bot_id", "rating")
        )
        assert len(set(ratings.values())) > 1, ratings
        assert all(b.games > 0 for b in BotRating.objects.filter(ladder=ladder, bot__in=house))
        # A new version (another endpoint) lifts the suspension; it is seated and plays again.
        lift = Match.objects.aggregate(m=Max("pk"))["m"]
        version = bot_set_endpoint(
            user=owners[3], bot_id=crasher.pk, endpoint=cluster_bots["rand0"].address
        )
        assert Bot.objects.get(pk=crasher.pk).is_active

        def played_again() -> bool:
            return MatchSeat.objects.filter(
                bot=crasher, version=version, match__status="finished", match_id__gt=lift
            ).exists()

        wait_until(played_again, 240, "the lifted bot seated and played with its new version")
        assert not MatchSeat.objects.filter(
            bot=crasher, version=version, ended="forfeited"
        ).exists()
    finally:
        cluster.stop()
        crasher_proc.stop()
    # Nobody asked for any of these matches, no table had two bots of one owner, none stalled.
    matches = list(Match.objects.prefetch_related("seats__bot"))
    assert matches and all(m.requested_by_id is None for m in matches)
    for match in matches:
        owners_at = [s.bot.owner_id for s in match.seats.all()]
        assert len(set(owners_at)) == len(owners_at), f"same-owner table in match {match.pk}"
    statuses = Counter(m.status for m in matches)
    assert statuses["errored"] == 0, statuses
    call_command("rerate", "--check")
    log = cluster.logs()
    assert "matchmaker dd-2: " in log or f"matchmaker {ladder}: " in log
    assert "suspended automatically" in log


def test_beat_matchmaker_duplicate_sets_are_played_on_one_cave(
    make_cluster: Any, cluster_bots: dict[str, Proc]
) -> None:
    """With duplicate sets on, the matchmaker's deals are played by the workers: every
    rotation of one seed, every bot in every seat once, all rated."""
    from ladder.tournaments.models import Deal

    cluster = make_cluster("embedded")
    staff = User.objects.create_user(username="staff", password="pw-12345678", is_staff=True)
    for pk in cluster.bots.values():
        bot_suspend(user=staff, bot_id=pk, reason="not in this test")
    owners = [User.objects.create_user(username=f"d{i}", password="pw-12345678") for i in range(3)]
    for i, owner in enumerate(owners):
        bot_create(
            owner=owner, name=f"dup{i}", kind="remote", endpoint=cluster_bots[f"rand{i}"].address
        )
    env = {
        **MATCHMAKER,
        "LADDER_MATCHMAKER_DUPLICATES": "on",
        "LADDER_MATCHMAKER_MAX_CONCURRENT": "3",
    }
    cluster.start_worker(concurrency=2, beat=True, **env)

    def finished_deals() -> list[Deal]:
        done = []
        for deal in Deal.objects.prefetch_related("matches__seats"):
            matches = list(deal.matches.all())
            if len(matches) == deal.seats and all(m.status == "finished" for m in matches):
                done.append(deal)
        return done

    try:
        deals = wait_until(lambda: len(finished_deals()) >= 2 and finished_deals(), 240, "2 deals")
    finally:
        cluster.stop()
    for deal in deals:
        matches = sorted(deal.matches.all(), key=lambda m: m.deal_rotation)
        assert {m.seed for m in matches} == {deal.seed}
        assert all(m.rated and m.requested_by_id is None for m in matches)
        seats: dict[int, list[int]] = {}
        for m in matches:
            for s in m.seats.all():
                seats.setdefault(s.bot_id, []).append(s.seat)
        assert all(sorted(v) == list(range(deal.seats)) for v in seats.values()), seats
    assert "duplicate sets: deals" in cluster.logs()
    call_command("rerate", "--check")
