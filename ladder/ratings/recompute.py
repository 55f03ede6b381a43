"""Recomputing a ladder's ratings from its history, to check, to rewrite, or to switch system.

Ratings are written once, when ``match_record_result`` (``ladder.matches.recording``)
calls ``ladder.ratings.services``. Here the very same functions (``services.rate``,
``seeded``, ``season_reset``) replay a ladder's recorded results in recording
order (``MatchResult.id``) from the start, season by season:
``ratings_recompute`` compares every stored value with the replay (the seats'
before/after, the ledger, the bot and version entries, the finished seasons'
tables), ``ratings_rewrite`` writes the replayed values — under another system
when asked, which is how a ladder switches system: a recompute, never an edit.
Both stream plain values from the database (never one model object per seat),
so memory grows with the number of bots (and a finished season's results,
which its official batch fit needs), not with the whole history.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from django.db import transaction

from ladder.bots.models import Bot
from ladder.common import elo
from ladder.ladders import ladder_get
from ladder.matches.models import MatchSeat
from ladder.ratings import systems
from ladder.ratings.models import BotRating, RatingChange, Season, SeasonStanding, VersionRating
from ladder.ratings.services import (
    RatingState,
    SeatIn,
    bot_ratings_ensure,
    conservative,
    rate,
    season_current,
    season_reset,
    seeded,
    start_standing,
    system_check,
)

MAX_LISTED = 1000
"""Mismatches listed in full; the rest are counted."""
CHUNK = 5000
WRITE_BATCH = 1000
REPLAY_FIELDS = (
    "result_id", "pk", "match_id", "seat", "bot_id", "version_id", "rank", "rating_before",
    "rating_after", "result__elo_k", "result__recorded_at",
)  # fmt: skip
LEDGER_FIELDS = (
    "season", "bot_id", "version_id", "rank", "rated", "rating_before", "sigma_before",
    "rating_after", "sigma_after", "version_rating_after",
)  # fmt: skip


@dataclass
class Recomputed:
    """Outcome of a replay of one ladder's history."""

    ladder: str
    system: str = ""
    matches: int = 0
    mismatch_count: int = 0
    mismatches: list[str] = field(default_factory=list)
    standings: dict[int, RatingState] = field(default_factory=dict)
    versions: dict[int, tuple[int, RatingState]] = field(default_factory=dict)
    seasons: dict[int, list[SeasonStanding]] = field(default_factory=dict)

    def mismatch(self, line: str) -> None:
        self.mismatch_count += 1
        if len(self.mismatches) < MAX_LISTED:
            self.mismatches.append(line)


@dataclass(frozen=True)
class ReratedSeat:
    """One seat as stored and as replayed: the seat's before/after and its ledger row."""

    seat_id: int
    match_id: int
    seat: int
    bot_id: int
    stored: tuple[int | None, int | None]
    computed: tuple[int, int]
    ledger: RatingChange


def _season_of(seasons: list[Season], result_id: int) -> Season:
    for season in reversed(seasons):
        if result_id > season.after_result:
            return season
    return seasons[0]


def _close(
    rec: Recomputed, season: Season, games: list[tuple[list[int], list[int]]], played: set[int]
) -> None:
    """The replayed final table of a finished season (online standings, official fit)."""
    fit = systems.ml_plackett_luce(games)
    official = sorted(
        ((b, round(fit.mu[b] * elo.SCALE), round(fit.sigma[b] * elo.SCALE)) for b in fit.mu),
        key=lambda t: (-t[1], t[0]),
    )
    start = start_standing(rec.system)
    rows = []
    for position, (bot_id, rating, sigma) in enumerate(official, 1):
        if bot_id not in played:
            continue
        s = rec.standings.get(bot_id, start)
        rows.append(
            SeasonStanding(
                season=season, bot_id=bot_id, rating=s.rating, sigma=s.sigma,
                score=conservative(s.rating, s.sigma), games=s.games, wins=s.wins,
                official_rating=rating, official_sigma=sigma, official_position=position,
            )
        )  # fmt: skip
    rec.seasons[season.number] = rows


def rerate_history(rec: Recomputed, seasons: list[Season]) -> Iterator[ReratedSeat]:
    """Every recorded seat of the ladder in recording order, rated again from the start.

    ``rec.standings`` (bot id -> standing) starts empty and is left at the end
    of the history, ``rec.versions`` (version id -> (bot id, standing)) too, and
    ``rec.seasons`` gets each finished season's table. Unrated results (K 0)
    keep before = after and count no game, exactly as the recording does.
    """
    start = start_standing(rec.system)
    rows = (
        MatchSeat.objects.filter(match__ladder=rec.ladder, result__isnull=False)
        .order_by("result_id", "seat")
        .values_list(*REPLAY_FIELDS)
        .iterator(chunk_size=CHUNK)
    )
    season = seasons[0]
    season_games: list[tuple[list[int], list[int]]] = []
    played: set[int] = set()
    finished = {s.number for s in seasons[:-1]}
    for result_id, group in itertools.groupby(rows, key=itemgetter(0)):
        seats = list(group)
        now_season = _season_of(seasons, result_id)
        while season.number < now_season.number:
            _close(rec, season, season_games, played)
            season = seasons[season.number]  # numbers are 1, 2, ...: the next one
            rec.standings = {
                b: season_reset(rec.system, s, season.shrink) for b, s in rec.standings.items()
            }
            season_games, played = [], set()
        k = seats[0][9]
        ins = [SeatIn(r[4], r[5], r[6] or 0) for r in seats]
        ranks = [s.rank for s in ins]
        now = [rec.standings.get(s.bot_id) or start for s in ins]
        rated = k > 0 and len(seats) >= 2
        after = rate(rec.system, now, ranks, k) if rated else now
        version_after: dict[int, int] = {}
        if rated and all(s.version_id is not None for s in ins):
            vnow = []
            for s in ins:
                assert s.version_id is not None
                have = rec.versions.get(s.version_id)
                if have is None:
                    earlier = [
                        vid for vid, (b, _) in rec.versions.items()
                        if b == s.bot_id and vid < s.version_id
                    ]  # fmt: skip
                    previous = rec.versions[max(earlier)][1] if earlier else None
                    vnow.append(seeded(rec.system, previous))
                else:
                    vnow.append(have[1])
            for s, v in zip(ins, rate(rec.system, vnow, ranks, k), strict=True):
                assert s.version_id is not None
                rec.versions[s.version_id] = (s.bot_id, v)
                version_after[s.version_id] = v.rating
        if rated:
            for s, a in zip(ins, after, strict=True):
                rec.standings[s.bot_id] = a
                played.add(s.bot_id)
            if season.number in finished:
                season_games.append(([s.bot_id for s in ins], ranks))
        for row, s, b, a in zip(seats, ins, now, after, strict=True):
            ledger = RatingChange(
                ladder=rec.ladder, season=season.number, result_id=result_id,
                match_id=row[2], seat=row[3], bot_id=s.bot_id, version_id=s.version_id,
                rank=s.rank, rated=rated, rating_before=b.rating, sigma_before=b.sigma,
                rating_after=a.rating, sigma_after=a.sigma,
                version_rating_after=version_after.get(s.version_id)
                if s.version_id is not None else None,
                recorded_at=row[10],
            )  # fmt: skip
            yield ReratedSeat(
                row[1], row[2], row[3], s.bot_id, (row[7], row[8]), (b.rating, a.rating), ledger
            )
    while season.number < seasons[-1].number:
        _close(rec, season, season_games, played)
        season = seasons[season.number]
        rec.standings = {
            b: season_reset(rec.system, s, season.shrink) for b, s in rec.standings.items()
        }
        season_games, played = [], set()


def _ledger_rows(ladder: str) -> Iterator[tuple[Any, ...]]:
    return (
        RatingChange.objects.filter(ladder=ladder)
        .order_by("result_id", "seat")
        .values_list("result_id", "seat", *LEDGER_FIELDS)
        .iterator(chunk_size=CHUNK)
    )


def _ledger_key(row: RatingChange) -> tuple[Any, ...]:
    return (row.result_id, row.seat, *(getattr(row, f) for f in LEDGER_FIELDS))


def _rerate(ladder: str, system: str, *, write: bool) -> Recomputed:
    """Replay ``ladder``; with ``write``, store every replayed seat and ledger row."""
    rec = Recomputed(ladder=ladder, system=system)
    seasons = list(Season.objects.filter(ladder=ladder).order_by("number"))
    names: dict[int, str] | None = None
    pending: list[MatchSeat] = []
    ledger: list[RatingChange] = []
    stored_ledger = None if write else _ledger_rows(ladder)
    last_match = None
    if write:
        RatingChange.objects.filter(ladder=ladder).delete()
    for seat in rerate_history(rec, seasons):
        if seat.match_id != last_match:
            rec.matches += 1
            last_match = seat.match_id
        if write:
            ledger.append(seat.ledger)
            if len(ledger) >= WRITE_BATCH:
                RatingChange.objects.bulk_create(ledger)
                ledger.clear()
        elif stored_ledger is not None:
            want = _ledger_key(seat.ledger)
            got = next(stored_ledger, None)
            if got != want:
                rec.mismatch(
                    f"match {seat.match_id} seat {seat.seat}: ledger {got}, replayed {want}"
                )
        if seat.stored == seat.computed:
            continue
        names = names if names is not None else dict(Bot.objects.values_list("pk", "name"))
        rec.mismatch(
            f"match {seat.match_id} seat {seat.seat} ({names.get(seat.bot_id)}):"
            f" stored {seat.stored[0]}->{seat.stored[1]},"
            f" recomputed {seat.computed[0]}->{seat.computed[1]}"
        )
        if write:
            before, after = seat.computed
            pending.append(MatchSeat(pk=seat.seat_id, rating_before=before, rating_after=after))
            if len(pending) >= WRITE_BATCH:
                MatchSeat.objects.bulk_update(pending, ["rating_before", "rating_after"])
                pending.clear()
    if pending:
        MatchSeat.objects.bulk_update(pending, ["rating_before", "rating_after"])
    if ledger:
        RatingChange.objects.bulk_create(ledger)
    if stored_ledger is not None and next(stored_ledger, None) is not None:
        rec.mismatch("the ledger has rows for seats the history does not have")
    return rec


def _entry_text(values: tuple[int, ...]) -> str:
    rating, sigma, score, games, wins = values
    return f"rating {rating} games {games} wins {wins} sigma {sigma} score {score}"


def _compare_entries(rec: Recomputed) -> list[BotRating]:
    """Entries whose stored values differ from the replayed ones (changed in memory)."""
    start = start_standing(rec.system)
    names = dict(Bot.objects.values_list("pk", "name"))
    changed = []
    fields = ("rating", "sigma", "score", "games", "wins")
    for entry in BotRating.objects.filter(ladder=rec.ladder).only("pk", "bot_id", *fields):
        s = rec.standings.get(entry.bot_id, start)
        want = (s.rating, s.sigma, s.score, s.games, s.wins)
        have = tuple(getattr(entry, f) for f in fields)
        if have != want:
            rec.mismatch(
                f"bot {names.get(entry.bot_id, entry.bot_id)}: stored {_entry_text(have)},"
                f" recomputed {_entry_text(want)}"
            )
            for f, v in zip(fields, want, strict=True):
                setattr(entry, f, v)
            changed.append(entry)
    return changed


def _compare_versions(rec: Recomputed, *, write: bool) -> None:
    stored = {
        v.version_id: (v.bot_id, RatingState(v.rating, v.sigma, v.games, v.wins))
        for v in VersionRating.objects.filter(ladder=rec.ladder)
    }
    if stored != rec.versions:
        differing = sorted(set(stored) ^ set(rec.versions)) or sorted(
            v for v in stored if stored[v] != rec.versions.get(v)
        )
        rec.mismatch(f"version entries differ (versions {differing[:20]})")
        if write:
            VersionRating.objects.filter(ladder=rec.ladder).delete()
            VersionRating.objects.bulk_create(
                [
                    VersionRating(
                        version_id=vid, bot_id=b, ladder=rec.ladder, rating=s.rating,
                        sigma=s.sigma, games=s.games, wins=s.wins,
                    )
                    for vid, (b, s) in rec.versions.items()
                ],
                batch_size=WRITE_BATCH,
            )  # fmt: skip


def _compare_seasons(rec: Recomputed, *, write: bool) -> None:
    fields = (
        "bot_id", "rating", "sigma", "score", "games", "wins", "official_rating",
        "official_sigma", "official_position",
    )  # fmt: skip
    for number, rows in rec.seasons.items():
        season = rows[0].season if rows else Season.objects.get(ladder=rec.ladder, number=number)
        have = sorted(
            SeasonStanding.objects.filter(season=season).values_list(*fields), key=itemgetter(0)
        )
        want = sorted((tuple(getattr(r, f) for f in fields) for r in rows), key=itemgetter(0))
        if have != want:
            rec.mismatch(f"season {number}: final table differs from the replay")
            if write:
                SeasonStanding.objects.filter(season=season).delete()
                SeasonStanding.objects.bulk_create(rows, batch_size=WRITE_BATCH)


def _seasons(key: str) -> list[Season]:
    season_current(ladder=key)
    return list(Season.objects.filter(ladder=key).order_by("number"))


def ratings_recompute(*, ladder: str | None = None) -> Recomputed:
    """Replay one ladder (default: the default ladder) under its system; list every stored
    value that differs."""
    key = ladder_get(ladder).key
    seasons = _seasons(key)
    rec = _rerate(key, seasons[-1].system, write=False)
    _compare_entries(rec)
    _compare_versions(rec, write=False)
    _compare_seasons(rec, write=False)
    return rec


def ratings_rewrite(*, ladder: str | None = None, system: str | None = None) -> Recomputed:
    """Recompute one ladder and write every differing value; with ``system``, the whole
    history is re-rated under that system and the ladder's seasons rate with it from now.

    First every bot gets an entry on the ladder (what a newly configured ladder
    needs), then the ladder's seasons and entries are locked (entries by bot id,
    the recording service's order) for the replay and the writes.
    """
    key = ladder_get(ladder).key
    seasons = _seasons(key)
    chosen = system_check(system) if system else seasons[-1].system
    bot_ratings_ensure(bot_ids=list(Bot.objects.values_list("pk", flat=True)), ladder_keys=[key])
    with transaction.atomic():
        list(Season.objects.select_for_update().filter(ladder=key).values_list("pk", flat=True))
        list(
            BotRating.objects.select_for_update()
            .filter(ladder=key)
            .order_by("bot_id")
            .values_list("pk", flat=True)
        )
        Season.objects.filter(ladder=key).update(system=chosen)
        rec = _rerate(key, chosen, write=True)
        BotRating.objects.bulk_update(
            _compare_entries(rec),
            ["rating", "sigma", "score", "games", "wins"],
            batch_size=WRITE_BATCH,
        )
        _compare_versions(rec, write=True)
        _compare_seasons(rec, write=True)
    return rec
