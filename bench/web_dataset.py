"""A ladder of a given size in a database, for page and query benchmarks.

``build(bots=10_000, matches=200_000)`` writes owners, bots (half hosted, half
remote, a few suspended), one version each, finished matches of 2-4 seats with
results and replays' metadata, ratings computed by the real Elo in recording
order (so every stored figure is consistent, as ``rerate --check`` would find),
a few tournaments, and queued and running matches. Bots are drawn with a skew
(some play far more than others) as on a real ladder.

Rows are written with ``bulk_create`` in batches inside one transaction per
table, with a progress bar; ``build`` refuses a database that already has bots
(use ``--rebuild`` from the benchmark to flush first). Replay files are not
written: pages only show their size and hash.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction
from tqdm import tqdm

from ladder.accounts.models import User
from ladder.bots.models import Bot, BotVersion
from ladder.matches.models import Match, MatchResult, MatchSeat, Tournament
from ladder.ratings import elo

BATCH = 5_000
BOTS_PER_OWNER = 10
T = TypeVar("T")


@dataclass(frozen=True)
class Dataset:
    bots: int
    matches: int
    seats: int
    owners: int


def _batches(items: Sequence[T], size: int = BATCH) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _bulk(model: Any, rows: list[Any], label: str) -> list[Any]:
    out: list[Any] = []
    with transaction.atomic(), tqdm(total=len(rows), desc=label, unit="row") as bar:
        for chunk in _batches(rows):
            out.extend(model.objects.bulk_create(chunk))
            bar.update(len(chunk))
    return out


Plan = tuple[list[int], list[int], Tournament | None]


@transaction.atomic
def _write_matches(
    plan: Sequence[Plan],
    first: int,
    rng: random.Random,
    ratings: dict[int, int],
    games: dict[int, int],
    version_of: dict[int, int],
    k: float,
) -> int:
    """One batch of finished matches in recording order, rated as the service would."""
    rows = []
    for i, (seated, _, tournament) in enumerate(plan, start=first):
        sha = hashlib.sha256(str(i).encode()).hexdigest()
        rows.append(
            Match(
                seed=rng.randrange(2**63),
                status=Match.Status.FINISHED,
                tournament=tournament,
                attempts=1,
                replay=f"replays/bench/{sha}.json.gz",
                replay_sha256=sha,
                replay_size=4000 + len(seated) * 1500,
            )
        )
    stored = Match.objects.bulk_create(rows)
    results, seats = [], []
    for match, (seated, ranks, _) in zip(stored, plan, strict=True):
        before = [ratings[b] for b in seated]
        deltas = elo.rate(before, ranks, k)
        winner = ranks.index(1)
        results.append(
            MatchResult(
                match=match,
                reason="won",
                winner=winner,
                turns=40 * len(seated),
                rounds=40,
                data={"reason": "won", "winner": winner, "ranks": ranks},
                elo_k=k,
            )
        )
        for seat, (bot, rank, rb, d) in enumerate(zip(seated, ranks, before, deltas, strict=True)):
            seats.append(
                MatchSeat(
                    match=match,
                    seat=seat,
                    bot_id=bot,
                    version_id=version_of[bot],
                    rank=rank,
                    score=10 - rank,
                    ended="won" if rank == 1 else "finished",
                    rating_before=rb,
                    rating_after=rb + d,
                )
            )
            ratings[bot] = rb + d
            games[bot] += 1
    MatchResult.objects.bulk_create(results)
    MatchSeat.objects.bulk_create(seats, batch_size=BATCH)
    return len(seats)


def build(*, bots: int, matches: int, seed: int = 1) -> Dataset:
    """Write the data set; the database must have no bots yet."""
    if Bot.objects.exists():
        raise RuntimeError("the database already has bots; flush it first")
    rng = random.Random(seed)
    owners_n = max(1, bots // BOTS_PER_OWNER)
    owners = _bulk(
        User,
        [User(username=f"owner{i:05d}", password="!") for i in range(owners_n)],
        "owners",
    )
    bot_rows = []
    for i in range(bots):
        suspended = i % 97 == 0
        bot_rows.append(
            Bot(
                owner=owners[i % owners_n],
                name=f"bot{i:05d}",
                kind=Bot.Kind.HOSTED if i % 2 else Bot.Kind.REMOTE,
                is_active=not suspended,
                suspended_reason="crashed in ten matches in a row" if suspended else "",
            )
        )
    made = _bulk(Bot, bot_rows, "bots")
    versions = _bulk(
        BotVersion,
        [
            BotVersion(
                bot=b,
                number=1,
                endpoint=f"bot{b.pk}.example.org:50051" if b.kind == Bot.Kind.REMOTE else "",
                archive="" if b.kind == Bot.Kind.REMOTE else f"bots/{b.pk}/v1.py",
                archive_sha256="" if b.kind == Bot.Kind.REMOTE else "0" * 64,
                archive_size=0 if b.kind == Bot.Kind.REMOTE else 1234,
                entry_point="" if b.kind == Bot.Kind.REMOTE else "bot.py",
                validation_log="bench",
            )
            for b in made
        ],
        "versions",
    )
    version_of = {v.bot_id: v.pk for v in versions}
    ids = [b.pk for b in made]
    # Skewed participation: weight ~ 1/(rank^0.6), shuffled so it is not the id order.
    weights = [1.0 / (k + 1) ** 0.6 for k in range(len(ids))]
    rng.shuffle(weights)
    cumulative = list(itertools.accumulate(weights))
    tournaments = [
        Tournament.objects.create(name=f"Bench Cup {k}", format=Tournament.Format.ROUND_ROBIN)
        for k in range(5)
    ]
    field_of = {t.pk: rng.sample(ids, 32) for t in tournaments}
    for t in tournaments:
        t.participants.set(field_of[t.pk])

    ratings = dict.fromkeys(ids, settings.LADDER_ELO_START)
    games = dict.fromkeys(ids, 0)
    k = settings.LADDER_ELO_K
    plan: list[Plan] = []
    for m in range(matches):
        n = rng.choice((2, 2, 3, 4))
        tournament = tournaments[m % 5] if m % 40 == 0 else None
        if tournament is not None:
            seated = rng.sample(field_of[tournament.pk], n)
        else:
            seated = list(dict.fromkeys(rng.choices(ids, cum_weights=cumulative, k=n + 2)))[:n]
            if len(seated) < 2:
                continue
        ranks = rng.sample(range(1, len(seated) + 1), len(seated))
        plan.append((seated, ranks, tournament))

    seats_n = 0
    with tqdm(total=len(plan), desc="matches, results, seats", unit="match") as bar:
        for offset, chunk in enumerate(_batches(plan, 2_000)):
            seats_n += _write_matches(chunk, offset * 2_000, rng, ratings, games, version_of, k)
            bar.update(len(chunk))
    with transaction.atomic():
        for chunk in tqdm(list(_batches(made)), desc="bot ratings", unit="batch"):
            for b in chunk:
                b.rating, b.games = ratings[b.pk], games[b.pk]
            Bot.objects.bulk_update(chunk, ["rating", "games"])
    open_matches = []
    for status, count in ((Match.Status.QUEUED, 60), (Match.Status.RUNNING, 8)):
        for _ in range(count):
            seated = rng.sample(ids, 2)
            open_matches.append((Match(seed=rng.randrange(2**63), status=status), seated))
    for match, seated in open_matches:
        match.save()
        MatchSeat.objects.bulk_create(
            MatchSeat(match=match, seat=s, bot_id=b, version_id=version_of[b])
            for s, b in enumerate(seated)
        )
    return Dataset(bots=bots, matches=len(plan), seats=seats_n, owners=owners_n)
