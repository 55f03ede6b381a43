"""A tournament's standings are kept as counters when its results are recorded: they
always equal a recount from the seats, a re-delivered result or error counts nothing,
and the standings read from them are those ``standings`` scores from the matches."""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ladder.common.exceptions import Conflict
from ladder.matches.claims import match_fail
from ladder.matches.models import Match, MatchSeat, TournamentPairTally, TournamentTally
from ladder.matches.retries import match_requeue_stale
from ladder.matches.tournament_tallies import tournament_tallies_from_seats
from ladder.tournaments import selectors
from ladder.tournaments.models import Tournament, TournamentBye
from ladder.tournaments.services import tournament_advance, tournament_create
from ladder.tournaments.standings import Outcome, standings
from tests.ladder.conftest import record

pytestmark = pytest.mark.django_db


def counted() -> tuple[dict[Any, dict[str, int]], dict[Any, dict[str, int]]]:
    bots = {
        (r.tournament_id, r.bot_id): {
            "half_points": r.half_points, "played": r.played, "wins": r.wins,
            "errored": r.errored, "byes": r.byes,
        }
        for r in TournamentTally.objects.all()
    }  # fmt: skip
    pairs = {
        (r.tournament_id, r.bot_id, r.opponent_id): {
            "meetings": r.meetings,
            "half_points": r.half_points,
        }
        for r in TournamentPairTally.objects.all()
    }
    return bots, pairs


def recounted() -> tuple[dict[Any, dict[str, int]], dict[Any, dict[str, int]]]:
    seats = (
        MatchSeat.objects.filter(
            match__tournament__isnull=False,
            match__status__in=[Match.Status.FINISHED, Match.Status.ERRORED],
        )
        .order_by("match_id", "seat")
        .values_list("match__tournament_id", "match_id", "match__status", "bot_id", "rank")
    )
    tallies = tournament_tallies_from_seats(
        [(t, m, status == Match.Status.FINISHED, b, r) for t, m, status, b, r in seats],
        TournamentBye.objects.values_list("tournament_id", "bot_id"),
    )
    return tallies.bots, tallies.pairs


def scored(tournament: Tournament) -> list[tuple[Any, ...]]:
    """The standings scored from the matches by the pure function (the reference)."""
    by_match: dict[int, list[tuple[int, int | None]]] = {}
    errored: set[int] = set()
    seats = MatchSeat.objects.filter(
        match__tournament=tournament,
        match__status__in=[Match.Status.FINISHED, Match.Status.ERRORED],
    ).order_by("match_id", "seat")
    for match_id, status, bot, rank in seats.values_list(
        "match_id", "match__status", "bot_id", "rank"
    ):
        by_match.setdefault(match_id, []).append((bot, rank))
        if status == Match.Status.ERRORED:
            errored.add(match_id)
    outcomes = [
        Outcome([b for b, _ in s], None if m in errored else [r or 0 for _, r in s])
        for m, s in by_match.items()
    ]
    table = standings(
        tournament.participants.values_list("pk", flat=True),
        outcomes,
        byes=tournament.byes.values_list("bot_id", flat=True),
        swiss=tournament.format == Tournament.Format.SWISS,
    )
    return [_line(s) for s in table]


def _line(s: Any) -> tuple[Any, ...]:
    return (s.bot, s.rank, s.points, s.played, s.wins, s.errored, s.byes, s.head_to_head,
            s.buchholz)  # fmt: skip


def read(tournament: Tournament) -> list[tuple[Any, ...]]:
    return [_line(ln.standing) for ln in selectors.tournament_standings(tournament=tournament)]


@pytest.fixture
def bots(make_user: Any, make_bot: Any) -> list[Any]:
    owners = [make_user(f"owner{i}") for i in range(7)]
    return [make_bot(owner, f"bot-{i}") for i, owner in enumerate(owners)]


def test_round_robin_counters_equal_a_recount_and_redelivery_counts_nothing(
    bots: list[Any],
) -> None:
    rng = random.Random(11)
    t = tournament_create(name="cup", participant_ids=[b.pk for b in bots], seats=3)
    matches = list(Match.objects.filter(tournament=t).order_by("pk"))
    # Before any result every participant is listed with nothing, sharing rank 1.
    assert read(t) == scored(t) and {line[1:] for line in read(t)} == {(1, 0.0, 0, 0, 0, 0, 0, 0)}
    played = matches[: len(matches) - 6]
    for match in played[:-3]:
        n = match.seats.count()
        record(match, [rng.randint(1, n) for _ in range(n)])  # ties included
    for match in played[-3:]:
        match_fail(match_id=match.pk, error="engine died")
    assert counted() == recounted()
    assert read(t) == scored(t)
    before = counted()
    # A re-delivered result and a second error of the same matches change nothing.
    first = played[0]
    ranks = [r or 0 for r in first.seats.order_by("seat").values_list("rank", flat=True)]
    assert not record(first, ranks).recorded
    with pytest.raises(Conflict):
        match_fail(match_id=played[-1].pk, error="again")
    with pytest.raises(Conflict):
        record(played[-1], [1, 2, 3])
    assert counted() == before
    # The matches left are played.
    for match in matches[len(played) :]:
        record(match, [1, 2, 3])
    assert counted() == recounted()
    assert read(t) == scored(t)


def test_swiss_byes_and_buchholz_equal_the_scoring_of_the_matches(bots: list[Any]) -> None:
    ids = [b.pk for b in bots[:5]]
    t = tournament_create(name="swiss", participant_ids=ids, format=Tournament.Format.SWISS)
    rng = random.Random(5)
    for number in (1, 2, 3):
        for m in Match.objects.filter(tournament=t, tournament_round=number):
            record(m, rng.choice([[1, 2], [2, 1], [1, 1]]))
        tournament_advance(tournament_id=Tournament.objects.get(pk=t.pk).pk)
    t = Tournament.objects.get(pk=t.pk)
    assert t.status == Tournament.Status.FINISHED and t.byes.count() == 3
    assert counted() == recounted()
    assert read(t) == scored(t)
    assert any(line[-1] for line in read(t))  # Buchholz is summed


def test_a_page_of_standings_reads_its_lines_whatever_the_history(bots: list[Any]) -> None:
    t = tournament_create(name="cup", participant_ids=[b.pk for b in bots])
    matches = list(Match.objects.filter(tournament=t).order_by("pk"))

    def page() -> tuple[list[tuple[Any, ...]], int]:
        table = selectors.tournament_standings_table(tournament=t)
        with CaptureQueriesContext(connection) as queries:
            lines = [_line(ln.standing) for ln in table[2:5]]
            assert len(table) == len(bots)
        return lines, len(queries)

    for match in matches[:3]:
        record(match, [1, 2])
    few = page()
    for match in matches[3:]:
        record(match, [2, 1])
    many = page()
    assert few[1] == many[1] == 2  # the lines, and the count
    assert many[0] == scored(t)[2:5]


def test_the_janitor_counts_the_matches_it_errors_once(bots: list[Any]) -> None:
    """Matches whose worker was lost past their last attempt are errored by one pass,
    counted together (one lock order); the next pass finds nothing more to count."""
    t = tournament_create(name="cup", participant_ids=[b.pk for b in bots[:4]])
    matches = list(Match.objects.filter(tournament=t).order_by("pk"))
    record(matches[0], [1, 2])
    now = timezone.now()
    lost = [m.pk for m in matches[1:4]]
    Match.objects.filter(pk__in=lost).update(
        status=Match.Status.RUNNING, attempts=3, lease_expires_at=now - timedelta(seconds=1)
    )
    report = match_requeue_stale(queued_grace_s=600, max_attempts=3, now=now)
    assert sorted(report.errored) == lost
    assert counted() == recounted()
    assert sum(r.errored for r in TournamentTally.objects.filter(tournament=t)) == 2 * 3
    before = counted()
    assert not match_requeue_stale(queued_grace_s=600, max_attempts=3, now=now).errored
    assert counted() == before
    assert read(t) == scored(t)
