"""Build a ladder at scale on PostgreSQL: 10,000 bots and 200,000 finished matches by default.

    DATABASE_URL=postgres://.../ladder .venv/bin/python bench/ladder_data.py [--bots N]
        [--matches N] [--seed S] [--force]

Not a test: the data set the read benchmarks (``bench/ladder_reads.py``, and the
web pages' timings) run on. It is written with COPY in a minute or two, not
through the services, but shaped as they would leave it: owners with a few bots
each, remote and hosted bots with 1-3 versions, matches of 2-4 seats whose bots
are drawn with a long-tailed activity (the busiest bot plays a few thousand
matches), ranks drawn from hidden strengths, ratings applied with the project's
own Elo in recording order (the seats, entries and the ratings' ledger, whose
rows the bot pages' rating history reads, agree with ``rerate``; the version
entries are left empty: ``manage.py rerate`` fills them),
counters on the rating entries, the opponents' and the tournaments' tallies, some
queued, running and errored matches, and tournaments of up to 2,000 bots.
Every database ladder table is emptied first.

Reusable: ``ensure(bots=..., matches=...)`` builds only when the database does
not already hold a data set of that size (``--force`` rebuilds), and returns a
``DataSet`` naming the busiest bot, a tournament and an owner for the benchmarks.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import itertools
import json
import math
import os
import random
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from tqdm import tqdm  # noqa: E402

from ladder.bots.models import Bot  # noqa: E402
from ladder.common import elo  # noqa: E402
from ladder.ladders import ladder_default  # noqa: E402
from ladder.matches.models import Match, MatchResult, MatchSeat  # noqa: E402
from ladder.matches.opponents import opponent_tallies_from_seats  # noqa: E402
from ladder.matches.tournament_tallies import tournament_tallies_from_seats  # noqa: E402
from ladder.ratings.models import BotRating, RatingChange, Season, SeasonStanding  # noqa: E402
from ladder.tournaments.models import Tournament  # noqa: E402

TABLES = [
    "ratings_ratingchange", "accounts_apitoken", "matches_opponenttally",
    "matches_tournamentpairtally", "matches_tournamenttally", "matches_matchseat",
    "matches_matchresult", "matches_match",
    "matches_tournament_participants", "matches_tournament", "bots_botrating", "bots_botversion",
    "bots_bot", "accounts_user", "ratings_season", "ratings_seasonstanding",
]  # fmt: skip
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
OPEN_MATCHES = {"queued": 1000, "running": 100, "errored": 500}
TOURNAMENTS = 50
SEATS = [2, 2, 3, 4]  # half duels, a quarter each of 3 and 4 seats
ENDINGS = {1: "won"}


@dataclass(frozen=True)
class DataSet:
    """What the benchmarks address: the sizes and some rows worth reading."""

    bots: int
    matches: int
    busiest_bot: int
    busiest_owner: str
    tournament: int
    largest_match: int
    # A busy bot, not the busiest (the 20th by games): its deep match pages are timed too.
    busy_bot: int = 0
    # A finished season of the default ladder, with its final table (``finished_season``).
    finished_season: int = 0


def _defaults(table: str, columns: Sequence[str]) -> tuple[list[str], tuple[Any, ...]]:
    """The table's NOT NULL columns with a model default that ``columns`` leaves out, and
    those defaults: COPY bypasses the models, and a field added later must not break it."""
    from django.apps import apps

    models = apps.get_models(include_auto_created=True)
    model = next(m for m in models if m._meta.db_table == table)
    extra = [
        f for f in model._meta.concrete_fields
        if f.column not in columns and not f.null and not f.primary_key
        and f.get_default() is not None  # a default, or "" for a text field
    ]  # fmt: skip
    return [f.column for f in extra], tuple(f.get_default() for f in extra)


def _copy(table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    more, defaults = _defaults(table, columns)
    n = 0
    with (
        connection.cursor() as cur,
        cur.cursor.copy(f"COPY {table} ({', '.join([*columns, *more])}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row((*row, *defaults))
            n += 1
    return n


def _reset_sequences() -> None:
    with connection.cursor() as cur:
        for table in TABLES:
            cur.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'),"
                f" COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"
            )


def _digest(*parts: object) -> str:
    return hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()


def _result(match_id: int, ranks: Sequence[int]) -> dict[str, Any]:
    """An engine Result dict (docs/engine-api.md), as the recording service stores it."""
    winners = [s for s, r in enumerate(ranks) if r == 1]
    return {
        "reason": "won" if len(winners) == 1 else "cave_exhausted",
        "winner": winners[0] if len(winners) == 1 else -1,
        "turns": 20 + match_id % 71,
        "rounds": 3 + match_id % 10,
        "ranks": ranks,
        "seats": [
            {
                "seat": s,
                "rank": r,
                "objectives": 4,
                "completed": [f"obj-{(match_id + s) % 7}"],
                "loot_points": 10 - r,
                "torches": (match_id + s) % 4,
                "faults": 0,
                "ended": ENDINGS.get(r, "finished"),
                "reason": "",
            }
            for s, r in enumerate(ranks)
        ],
    }


def build(*, bots: int, matches: int, seed: int = 20260501, progress: bool = True) -> DataSet:
    """Empty the ladder tables and fill them (see the module docstring)."""
    assert connection.vendor == "postgresql", "the scale data set is for PostgreSQL"
    rng = random.Random(seed)
    call_command("migrate", verbosity=0)
    with transaction.atomic():
        _fill(rng, bots=bots, matches=matches, progress=progress)
    with connection.cursor() as cur:
        # Statistics for the planner, and the visibility map for index-only scans, as a
        # database that grew over months would have them.
        cur.execute("VACUUM ANALYZE")
    return describe()


def _fill(rng: random.Random, *, bots: int, matches: int, progress: bool) -> None:
    ladder = ladder_default()
    start = settings.LADDER_ELO_START
    with connection.cursor() as cur:
        cur.execute(f"TRUNCATE {', '.join(TABLES)} RESTART IDENTITY CASCADE")
    bar = tqdm(total=8, desc="ladder data", disable=not progress, unit="table")

    owners = max(1, bots // 8)
    _copy(
        "accounts_user",
        ["id", "password", "is_superuser", "username", "first_name", "last_name", "email",
         "is_staff", "is_active", "date_joined"],
        ((i, "!", False, f"owner-{i:05d}", "", "", "", False, True, EPOCH)
         for i in range(1, owners + 1)),
    )  # fmt: skip
    bar.update()

    # Bots: owner i has a long-tailed number of bots; a few suspended or retired.
    owner_of = [1 + int(owners * rng.random() ** 2) for _ in range(bots)]
    kinds = ["remote" if rng.random() < 0.9 else "hosted" for _ in range(bots)]
    versions: list[tuple[Any, ...]] = []
    current: dict[int, int] = {}
    for b in range(1, bots + 1):
        for number in range(1, rng.choice([1, 1, 2, 3]) + 1):
            vid = len(versions) + 1
            hosted = kinds[b - 1] == "hosted"
            digest = _digest("version", b, number) if hosted else ""
            versions.append((
                vid, b, number, f"bots/{b}/v{number}-{digest[:16]}.py" if hosted else "", digest,
                rng.randint(200, 50_000) if hosted else 0, "bot.py" if hosted else "",
                "" if hosted else f"bot-{b:05d}.example.org:50051",
                "ok" if hosted else "resolves to 203.0.113.7", EPOCH + timedelta(minutes=b),
                # Every version passed (hosted: its smoke match; its log is not written).
                "valid", "passed: rank 1 of 2 (bench)" if hosted else "", "",
                EPOCH + timedelta(minutes=b, seconds=30) if hosted else None,
            ))  # fmt: skip
            current[b] = vid
    bot_rows = [
        (b, owner_of[b - 1], f"bot-{b:05d}", kinds[b - 1], f"bench bot {b}",
         rng.random() > 0.03, "", "", EPOCH + timedelta(days=300) if rng.random() < 0.01 else None,
         None, EPOCH + timedelta(minutes=b), EPOCH + timedelta(minutes=b))
        for b in range(1, bots + 1)
    ]  # fmt: skip
    _copy(
        "bots_bot",
        ["id", "owner_id", "name", "kind", "description", "is_active", "suspended_reason",
         "suspension", "retired_at", "current_version_id", "created_at", "updated_at"],
        bot_rows,
    )  # fmt: skip
    _copy(
        "bots_botversion",
        ["id", "bot_id", "number", "archive", "archive_sha256", "archive_size", "entry_point",
         "endpoint", "validation_log", "created_at", "status", "smoke_outcome", "smoke_log",
         "smoke_at"],
        versions,
    )  # fmt: skip
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE bots_bot b SET current_version_id = v.id FROM bots_botversion v"
            " WHERE v.bot_id = b.id AND v.number = (SELECT MAX(number) FROM bots_botversion"
            " WHERE bot_id = b.id)"
        )
    bar.update()

    # Activity: a long tail, so the busiest bot plays thousands of matches.
    order = list(range(1, bots + 1))
    rng.shuffle(order)
    cum = list(itertools.accumulate(1.0 / (i + 10) ** 0.8 for i in range(bots)))
    strength = {b: rng.gauss(0, 1) for b in order}

    def pick(n: int) -> list[int]:
        seated: list[int] = []
        while len(seated) < n:
            b = order[bisect.bisect(cum, rng.random() * cum[-1])]
            if b not in seated:
                seated.append(b)
        return seated

    tournaments = [
        (t, f"Bench cup {t}", "round_robin", "pending", False, 2, False, "",
         EPOCH + timedelta(days=t))
        for t in range(1, TOURNAMENTS + 1)
    ]  # fmt: skip
    _copy(
        "matches_tournament",
        ["id", "name", "format", "status", "rated", "seats", "duplicate", "ladder", "created_at"],
        tournaments,
    )
    participants = (
        (t, b)
        for t in range(1, TOURNAMENTS + 1)
        for b in rng.sample(range(1, bots + 1), min(bots, 100 + 1900 * (t == 1) + 37 * t))
    )
    _copy("matches_tournament_participants", ["tournament_id", "bot_id"], participants)
    bar.update()

    ratings = dict.fromkeys(range(1, bots + 1), start)
    games = dict.fromkeys(range(1, bots + 1), 0)
    wins = dict.fromkeys(range(1, bots + 1), 0)
    total = matches + sum(OPEN_MATCHES.values())
    statuses = ["finished"] * matches + [s for s, n in OPEN_MATCHES.items() for _ in range(n)]

    def tournament_of(mid: int) -> int | None:
        return 1 + mid % TOURNAMENTS if mid % 20 == 0 else None

    def match_rows() -> Iterator[tuple[Any, ...]]:
        for mid, status in enumerate(statuses, start=1):
            at = EPOCH + timedelta(seconds=30 * mid)
            done = status in ("finished", "errored")
            sha = _digest("replay", mid) if status == "finished" else ""
            tournament = tournament_of(mid)
            yield (
                mid, ladder.key, ladder.ruleset, rng.getrandbits(63), ladder.difficulty, True,
                status, tournament, None, 1 if status != "queued" else 0,
                "bench" if status == "running" else "", None, at, at,
                at if status != "queued" else None, at + timedelta(seconds=20) if done else None,
                "bench: bot did not answer" if status == "errored" else "",
                f"replays/{mid}/{sha}.json.gz" if sha else "", sha,
                rng.randint(4_000, 40_000) if sha else 0, 0,
            )  # fmt: skip

    match_columns = [
        "id", "ladder", "ruleset", "seed", "difficulty", "rated", "status", "tournament_id",
        "requested_by_id", "attempts", "claimed_by", "lease_expires_at", "enqueued_at",
        "created_at", "started_at", "finished_at", "error", "replay", "replay_sha256",
        "replay_size", "priority",
    ]  # fmt: skip
    _copy("matches_match", match_columns, tqdm(
        match_rows(), total=total, desc="matches", disable=not progress, leave=False
    ))  # fmt: skip
    bar.update()

    results: list[tuple[int, tuple[int, ...]]] = []
    recorded: list[tuple[int, int, int]] = []  # (match, bot, rank): the opponent tallies
    ledger: list[tuple[Any, ...]] = []  # the ratings' ledger, a row per recorded seat
    # (tournament, match, finished, bot, rank) of tournament matches: their standings' tallies
    in_tournaments: list[tuple[int, int, bool, int, int | None]] = []

    def seat_rows() -> Iterator[tuple[Any, ...]]:
        """Seats in recording order, rated as they go (the results are kept for later)."""
        for mid, status in enumerate(statuses, start=1):
            seated = pick(rng.choice(SEATS))
            if status == "errored" and (t := tournament_of(mid)) is not None:
                in_tournaments.extend((t, mid, False, b, None) for b in seated)
            if status != "finished":
                for s, b in enumerate(seated):
                    yield (mid, s, b, current[b], None, None, 0, "", "", None, None, None, "", 0)
                continue
            noise = {b: strength[b] - math.log(-math.log(rng.random() or 1e-12)) for b in seated}
            order_now = sorted(seated, key=lambda b: -noise[b])
            ranks = tuple(order_now.index(b) + 1 for b in seated)
            before = [ratings[b] for b in seated]
            deltas = elo.rate(before, ranks, settings.LADDER_ELO_K)
            results.append((mid, ranks))
            recorded.extend((mid, b, rank) for b, rank in zip(seated, ranks, strict=True))
            if (t := tournament_of(mid)) is not None:
                in_tournaments.extend(
                    (t, mid, True, b, rank) for b, rank in zip(seated, ranks, strict=True)
                )
            for s, (b, rank, rb, d) in enumerate(zip(seated, ranks, before, deltas, strict=True)):
                yield (
                    mid, s, b, current[b], rank, 10 - rank, 0, ENDINGS.get(rank, "finished"), "",
                    rb, rb + d, mid, "", 0,
                )  # fmt: skip
                ledger.append((
                    ladder.key, 1, mid, mid, s, b, current[b], rank, True, rb,
                    elo.sigma_after(games[b]), rb + d, elo.sigma_after(games[b] + 1), None,
                    EPOCH + timedelta(seconds=30 * mid + 20),
                ))  # fmt: skip
                ratings[b], games[b], wins[b] = rb + d, games[b] + 1, wins[b] + (rank == 1)

    # Seats before results: one transaction, so their (deferred) foreign keys hold at commit.
    _copy(
        "matches_matchseat",
        ["match_id", "seat", "bot_id", "version_id", "rank", "score", "faults", "ended",
         "forfeit_reason", "rating_before", "rating_after", "result_id", "log", "log_size"],
        tqdm(seat_rows(), desc="seats", disable=not progress, leave=False, unit=" seats"),
    )  # fmt: skip
    bar.update()
    k = settings.LADDER_ELO_K
    _copy(
        "matches_matchresult",
        ["id", "match_id", "reason", "winner", "turns", "rounds", "data", "elo_k", "recorded_at"],
        (
            (mid, mid, r["reason"], r["winner"], r["turns"], r["rounds"], json.dumps(r), k,
             EPOCH + timedelta(seconds=30 * mid + 20))
            for mid, ranks in results
            for r in [_result(mid, ranks)]
        ),
    )  # fmt: skip
    bar.update()
    _copy(
        "ratings_ratingchange",
        ["ladder", "season", "result_id", "match_id", "seat", "bot_id", "version_id", "rank",
         "rated", "rating_before", "sigma_before", "rating_after", "sigma_after",
         "version_rating_after", "recorded_at"],
        ledger,
    )  # fmt: skip
    sigma = {b: elo.sigma_after(games[b]) for b in range(1, bots + 1)}
    k_sigma = settings.LADDER_RATING_K_SIGMA
    _copy(
        "matches_opponenttally",
        ["bot_id", "opponent_id", "matches", "ahead", "behind", "level"],
        (
            (bot, opponent, c["matches"], c["ahead"], c["behind"], c["level"])
            for (bot, opponent), c in opponent_tallies_from_seats(recorded).items()
        ),
    )
    tournament_tallies = tournament_tallies_from_seats(in_tournaments)
    _copy(
        "matches_tournamenttally",
        ["tournament_id", "bot_id", "half_points", "played", "wins", "errored", "byes"],
        (
            (t, b, c["half_points"], c["played"], c["wins"], c["errored"], c["byes"])
            for (t, b), c in tournament_tallies.bots.items()
        ),
    )
    _copy(
        "matches_tournamentpairtally",
        ["tournament_id", "bot_id", "opponent_id", "meetings", "half_points"],
        (
            (t, b, o, c["meetings"], c["half_points"])
            for (t, b, o), c in tournament_tallies.pairs.items()
        ),
    )
    _copy(
        "bots_botrating",
        ["bot_id", "ladder", "rating", "sigma", "score", "games", "wins"],
        (
            (b, ladder.key, ratings[b], sigma[b], ratings[b] - round(k_sigma * sigma[b]),
             games[b], wins[b])
            for b in range(1, bots + 1)
        ),
    )  # fmt: skip
    # The ratings above are Elo's: the ladder's first season says so (rerate --system
    # switches it, a recompute).
    Season.objects.create(ladder=ladder.key, number=1, system="elo", started_at=EPOCH)
    _reset_sequences()
    bar.update()
    bar.close()


def describe() -> DataSet:
    """The data set now in the database."""
    # The busiest bot that can still play: RequestChallenge is timed with it.
    busiest = (
        BotRating.objects.filter(bot__is_active=True, bot__retired_at__isnull=True)
        .order_by("-games")
        .values_list("bot_id", flat=True)
        .first()
    )
    assert busiest is not None, "no data set: run bench/ladder_data.py"
    owner = Bot.objects.get(pk=busiest).owner.username
    tournament = Tournament.objects.order_by("id").values_list("pk", flat=True).first() or 0
    largest = (
        MatchSeat.objects.filter(seat=3, result__isnull=False)
        .order_by("-match_id")
        .values_list("match_id", flat=True)
        .first()
    )
    by_games = BotRating.objects.order_by("-games", "bot_id").values_list("bot_id", flat=True)
    finished = Season.objects.filter(ended_at__isnull=False).values_list("number", flat=True)
    return DataSet(
        busy_bot=by_games[min(19, max(0, by_games.count() - 1))],
        finished_season=finished.order_by("number").first() or 0,
        bots=Bot.objects.count(),
        matches=MatchResult.objects.count(),
        busiest_bot=busiest,
        busiest_owner=owner,
        tournament=tournament,
        largest_match=largest or Match.objects.order_by("-id").values_list("pk", flat=True)[0],
    )


def ensure(*, bots: int, matches: int, seed: int = 20260501, force: bool = False) -> DataSet:
    """The data set of this size, built only if the database does not hold it already."""
    call_command("migrate", verbosity=0)
    have = (Bot.objects.count(), MatchResult.objects.count())
    # A data set from before the ledger was written is rebuilt: the bot pages read it.
    if not force and have == (bots, matches) and RatingChange.objects.exists():
        finished_season()
        return describe()
    build(bots=bots, matches=matches, seed=seed)
    finished_season()
    return describe()


def finished_season() -> int:
    """The number of a finished season of the default ladder with its final table, made
    when there is none: season 1 ends where the data set's results end (its table is the
    rating entries as they are, the official order by conservative rating: what
    ``season_close`` writes, without the batch fit the benchmarks do not measure), and
    season 2, empty, is the live one. The season-table reads are timed on it."""
    key = ladder_default().key
    found = Season.objects.filter(ladder=key, ended_at__isnull=False).order_by("number").first()
    if found is not None:
        return found.number
    first = Season.objects.get(ladder=key, number=1)
    last = RatingChange.objects.filter(ladder=key).order_by("-result_id").first()
    ended = last.recorded_at if last is not None else EPOCH
    entries = BotRating.objects.filter(ladder=key, games__gt=0).order_by("-score", "bot_id")
    rows = entries.values_list("bot_id", "rating", "sigma", "score", "games", "wins")
    with transaction.atomic():
        _copy(
            SeasonStanding._meta.db_table,
            ["season_id", "bot_id", "rating", "sigma", "score", "games", "wins",
             "official_rating", "official_sigma", "official_position"],
            (
                (first.pk, b, rating, sigma, score, games, wins, rating, sigma, n)
                for n, (b, rating, sigma, score, games, wins) in enumerate(rows, start=1)
            ),
        )  # fmt: skip
        first.ended_at = ended
        first.save(update_fields=["ended_at"])
        Season.objects.create(
            ladder=key,
            number=2,
            system=first.system,
            after_result=last.result_id if last is not None else 0,
            started_at=ended,
        )
    with connection.cursor() as cur:
        cur.execute(f"ANALYZE {SeasonStanding._meta.db_table}")
    return first.number


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=10_000)
    parser.add_argument("--matches", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=20260501)
    parser.add_argument("--force", action="store_true", help="rebuild even if it is there")
    args = parser.parse_args(argv)
    started = time.monotonic()
    data = ensure(bots=args.bots, matches=args.matches, seed=args.seed, force=args.force)
    print(f"{data} in {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
