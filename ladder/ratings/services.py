"""Writes of rating entries: create them, move them when a result is recorded, start seasons.

``match_record_result`` (``ladder.matches.recording``) is the one caller of
``rating_entries_lock`` and ``ratings_apply``, inside its recording transaction:
it locks the match, then the seated bots' entries here (by bot id, the one lock
order every writer uses, so concurrent recordings never deadlock on PostgreSQL),
allocates the result, and applies the change. The update is the pure
``ladder.ratings.systems`` function of the ladder's current season, the same one
``rerate`` (``ladder.ratings.recompute``) replays, on the same stored integers,
so a replay reproduces every stored value exactly. This module imports nothing
above ``ladder.ladders``: bots and matches sit above it and call it.

A version's own entry (``VersionRating``) is moved by the same result, rated
among the seats' versions; it is protected by its bot's entry lock.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ladder.common import elo
from ladder.common.exceptions import ApplicationError
from ladder.common.rows import rows_update
from ladder.ladders import ladders
from ladder.ratings import systems
from ladder.ratings.models import (
    BotRating,
    RatingChange,
    Season,
    SeasonStanding,
    VersionRating,
)


@dataclass(frozen=True)
class SeatRating:
    """One seat's rating before and after a recorded result (hundredths)."""

    before: int
    after: int


@dataclass(frozen=True)
class RatingState:
    """A rating state in stored units: mean and sigma in hundredths, counters."""

    rating: int
    sigma: int
    games: int = 0
    wins: int = 0

    @property
    def score(self) -> int:
        return conservative(self.rating, self.sigma)


@dataclass(frozen=True)
class SeatIn:
    """A seat of a result as the rating sees it."""

    bot_id: int
    version_id: int | None
    rank: int


def conservative(rating: int, sigma: int) -> int:
    """The rank rating the leaderboard ranks by: ``rating - k * sigma`` (hundredths), never
    below 0 (a rating the bot is almost surely at least; the board shows no negative
    number, and a rank rating of 0 says as much as one below it)."""
    return max(0, rating - round(settings.LADDER_RATING_K_SIGMA * sigma))


def provisional_sigma() -> int:
    """Sigma (hundredths) above which a rating is provisional: ``LADDER_PROVISIONAL_SIGMA``
    (default 135 points, ``elo.DEFAULT_PROVISIONAL_SIGMA``)."""
    return elo.provisional_threshold(settings.LADDER_PROVISIONAL_SIGMA)


def provisional_games() -> int:
    """Games below which a rating is provisional whatever its sigma:
    ``LADDER_PROVISIONAL_GAMES`` (10)."""
    return int(settings.LADDER_PROVISIONAL_GAMES)


def provisional_half_width() -> int:
    """The 95 % interval's half-width (whole points) above which a rating is provisional:
    1.96 times ``provisional_sigma`` (± 265 by default), what the pages say."""
    return round(elo.Z95 * provisional_sigma() / elo.SCALE)


@cache
def _system(key: str) -> systems.RatingSystem:
    return systems.system_get(key)


def system_check(key: str) -> str:
    """``key`` if it names a ladder rating system, else a clear error."""
    if key not in systems.LADDER_SYSTEMS:
        raise ApplicationError(
            f"unknown rating system {key!r}; systems: {', '.join(systems.LADDER_SYSTEMS)}"
        )
    return key


def start_standing(system: str) -> RatingState:
    """Where every entry of ``system`` starts."""
    if system == "elo":
        return RatingState(settings.LADDER_ELO_START, _elo_sigma(0))
    s = _system(system).initial()
    return RatingState(round(s.mu * elo.SCALE), round(s.sigma * elo.SCALE))


def _elo_sigma(games: int) -> int:
    return elo.sigma_after(games)


def rate(
    system: str, now: Sequence[RatingState], ranks: Sequence[int], k: float
) -> list[RatingState]:
    """One rated result in stored units: the standings after it (counters moved).

    Elo keeps its exact integer zero-sum update (``ladder.common.elo``) and
    derives sigma from the games; the Bayesian systems update mean and sigma
    and are rounded to hundredths, so a replay from the stored values is exact.
    """
    if system == "elo":
        deltas = elo.rate([s.rating for s in now], ranks, k)
        return [
            RatingState(s.rating + d, _elo_sigma(s.games + 1), s.games + 1, s.wins + (r == 1))
            for s, d, r in zip(now, deltas, ranks, strict=True)
        ]
    skills = [systems.Skill(s.rating / elo.SCALE, s.sigma / elo.SCALE, s.games) for s in now]
    after = _system(system).update(skills, ranks)
    return [
        RatingState(
            round(a.mu * elo.SCALE), round(a.sigma * elo.SCALE), s.games + 1, s.wins + (r == 1)
        )
        for s, a, r in zip(now, after, ranks, strict=True)
    ]


def seeded(system: str, previous: RatingState | None) -> RatingState:
    """A new version's first standing: its previous version's rating with a wider sigma
    (sigma grown by half the start sigma, in quadrature, at most the start sigma)."""
    start = start_standing(system)
    if previous is None:
        return start
    if system == "elo":
        return RatingState(previous.rating, start.sigma)
    widened = round(math.hypot(previous.sigma, start.sigma / 2))
    return RatingState(previous.rating, min(start.sigma, widened))


def season_reset(system: str, standing: RatingState, shrink: float) -> RatingState:
    """A season's soft reset: the rating keeps ``shrink`` of its distance from the start,
    sigma grows by half the start sigma in quadrature (at most the start's), counters
    restart. Elo's sigma follows its games, so it restarts at the start sigma."""
    start = start_standing(system)
    rating = start.rating + round(shrink * (standing.rating - start.rating))
    if system == "elo":
        return RatingState(rating, start.sigma)
    return RatingState(rating, min(start.sigma, round(math.hypot(standing.sigma, start.sigma / 2))))


# --- seasons -----------------------------------------------------------------------------


def season_current(*, ladder: str) -> Season:
    """The ladder's current season; its first is made on first use, rating with the
    ladder's configured system (``LADDER_LADDERS``, default ``LADDER_RATING_SYSTEM``)."""
    season = Season.objects.filter(ladder=ladder).order_by("-number").first()
    if season is not None:
        return season
    configured = ladders().get(ladder)
    system = system_check(configured.system if configured else settings.LADDER_RATING_SYSTEM)
    Season.objects.bulk_create(
        [Season(ladder=ladder, number=1, system=system, started_at=timezone.now())],
        ignore_conflicts=True,
    )
    return Season.objects.get(ladder=ladder, number=1)


def bot_ratings_ensure(*, bot_ids: Sequence[int], ladder_keys: Sequence[str]) -> None:
    """Give each bot a rating entry (start rating, no games) on each ladder where it has none.

    Idempotent and safe to run concurrently (conflicts are ignored); the
    recording service calls it before locking entries, ``rerate`` for a new ladder.
    """
    rows = []
    for key in ladder_keys:
        start = start_standing(season_current(ladder=key).system)
        rows += [
            BotRating(
                bot_id=b, ladder=key, rating=start.rating, sigma=start.sigma, score=start.score
            )
            for b in sorted(bot_ids)
        ]
    BotRating.objects.bulk_create(rows, ignore_conflicts=True, batch_size=1000)


def rating_entries_lock(*, ladder: str, bot_ids: Sequence[int]) -> dict[int, BotRating]:
    """Lock the bots' entries on ``ladder`` in bot-id order (inside the caller's transaction).

    An off-ladder match (``ladder`` empty) has no entries: an empty mapping.
    """
    if not ladder:
        return {}
    return {
        e.bot_id: e
        for e in BotRating.objects.select_for_update()
        .filter(ladder=ladder, bot_id__in=list(bot_ids))
        .order_by("bot_id")
    }


def version_standings(
    *, ladder: str, system: str, seats: Sequence[SeatIn]
) -> dict[int, RatingState]:
    """The seated versions' standings, seeding the missing ones from each bot's previous
    version (the highest-numbered version of the bot rated before it)."""
    ids = [s.version_id for s in seats if s.version_id is not None]
    have = {
        v.version_id: RatingState(v.rating, v.sigma, v.games, v.wins)
        for v in VersionRating.objects.filter(ladder=ladder, version_id__in=ids)
    }
    for seat in seats:
        if seat.version_id is None or seat.version_id in have:
            continue
        earlier = (
            VersionRating.objects.filter(
                ladder=ladder, bot_id=seat.bot_id, version_id__lt=seat.version_id
            )
            .order_by("-version_id")
            .first()
        )
        previous = (
            None if earlier is None else RatingState(earlier.rating, earlier.sigma, earlier.games)
        )
        have[seat.version_id] = seeded(system, previous)
    return have


def ratings_apply(
    *,
    entries: Mapping[int, BotRating],
    seats: Sequence[SeatIn],
    k: float,
    result_id: int,
    match_id: int,
    recorded_at: datetime | None = None,
) -> list[SeatRating] | None:
    """Rate one recorded result: move and save the locked ``entries``, the seated versions'
    entries and the ledger; each seat's change (in seat order).

    ``k == 0`` means unrated: before equals after and no game is counted (the
    ledger still lists the seats). Seats of an off-ladder match (no entries)
    keep no rating: None.
    """
    if not entries:
        return None
    ladder = next(iter(entries.values())).ladder
    season = season_current(ladder=ladder)
    ranks = [s.rank for s in seats]
    now = [
        RatingState(e.rating, e.sigma, e.games, e.wins) for e in (entries[s.bot_id] for s in seats)
    ]
    rated = k > 0 and len(seats) >= 2
    after = rate(season.system, now, ranks, k) if rated else now
    versions: dict[int, RatingState] = {}
    if rated and all(s.version_id is not None for s in seats):
        versions = version_standings(ladder=ladder, system=season.system, seats=seats)
        moved = rate(season.system, [versions[s.version_id] for s in seats], ranks, k)  # type: ignore[index]
        versions = {s.version_id: m for s, m in zip(seats, moved, strict=True)}  # type: ignore[misc]
        VersionRating.objects.bulk_create(
            [
                VersionRating(
                    version_id=vid, bot_id=s.bot_id, ladder=ladder, rating=v.rating,
                    sigma=v.sigma, games=v.games, wins=v.wins,
                )
                for s in seats
                if (vid := s.version_id) is not None and (v := versions[vid])
            ],
            update_conflicts=True,
            unique_fields=["ladder", "version"],
            update_fields=["rating", "sigma", "games", "wins"],
        )  # fmt: skip
    if rated:
        for seat, a in zip(seats, after, strict=True):
            entry = entries[seat.bot_id]
            entry.rating, entry.sigma, entry.score = a.rating, a.sigma, a.score
            entry.games, entry.wins = a.games, a.wins
        rows_update(list(entries.values()), ["rating", "sigma", "score", "games", "wins"])
    when = recorded_at or timezone.now()
    RatingChange.objects.bulk_create(
        RatingChange(
            ladder=ladder, season=season.number, result_id=result_id, match_id=match_id,
            seat=n, bot_id=s.bot_id, version_id=s.version_id, rank=s.rank, rated=rated,
            rating_before=b.rating, sigma_before=b.sigma, rating_after=a.rating,
            sigma_after=a.sigma,
            version_rating_after=(
                versions[s.version_id].rating if s.version_id in versions else None
            ),
            recorded_at=when,
        )
        for n, (s, b, a) in enumerate(zip(seats, now, after, strict=True))
    )  # fmt: skip
    return [SeatRating(b.rating, a.rating) for b, a in zip(now, after, strict=True)]


def season_official_table(*, season: Season) -> list[tuple[int, int, int]]:
    """(bot id, rating, sigma) of a season's official table: a batch maximum-likelihood
    Plackett-Luce fit of its rated results (from the ledger), best first."""
    rows = (
        RatingChange.objects.filter(ladder=season.ladder, season=season.number, rated=True)
        .order_by("result_id", "seat")
        .values_list("result_id", "bot_id", "rank")
        .iterator(chunk_size=5000)
    )
    games: list[tuple[list[int], list[int]]] = []
    current = None
    for result_id, bot_id, rank in rows:
        if result_id != current:
            games.append(([], []))
            current = result_id
        games[-1][0].append(bot_id)
        games[-1][1].append(rank)
    fit = systems.ml_plackett_luce(games)
    table = [(b, round(fit.mu[b] * elo.SCALE), round(fit.sigma[b] * elo.SCALE)) for b in fit.mu]
    return sorted(table, key=lambda t: (-t[1], t[0]))


@transaction.atomic
def season_start(*, ladder: str, shrink: float | None = None) -> Season:
    """End the ladder's current season and start the next.

    Every entry of the ladder is locked (bot-id order, as the recording does), so
    a result is either in the old season or in the new one. The old season's
    final table is kept (``SeasonStanding``: the online standings and the
    official batch ML table); then every entry is softly reset
    (``season_reset``, keeping ``shrink`` of its distance from the start,
    default ``LADDER_SEASON_SHRINK``). Matchmaking and tournaments read the
    entries as before: nothing else changes.
    """
    shrink = settings.LADDER_SEASON_SHRINK if shrink is None else float(shrink)
    if not 0.0 <= shrink <= 1.0:
        raise ApplicationError("shrink must be between 0 and 1")
    current = season_current(ladder=ladder)
    current = Season.objects.select_for_update().get(pk=current.pk)
    entries = list(BotRating.objects.select_for_update().filter(ladder=ladder).order_by("bot_id"))
    last = (
        RatingChange.objects.filter(ladder=ladder).order_by("-result_id").values_list(
            "result_id", flat=True
        ).first()
        or current.after_result
    )  # fmt: skip
    season_close(season=current, entries=entries)
    now = timezone.now()
    current.ended_at = now
    current.save(update_fields=["ended_at"])
    start = start_standing(current.system)
    nxt = Season.objects.create(
        ladder=ladder,
        number=current.number + 1,
        system=current.system,
        after_result=last,
        started_at=now,
        shrink=shrink,
        widen=start.sigma // 2,
    )
    for e in entries:
        reset = season_reset(current.system, RatingState(e.rating, e.sigma), shrink)
        e.rating, e.sigma, e.score, e.games, e.wins = (
            reset.rating, reset.sigma, reset.score, 0, 0,
        )  # fmt: skip
    BotRating.objects.bulk_update(entries, ["rating", "sigma", "score", "games", "wins"], 1000)
    return nxt


def season_close(*, season: Season, entries: Sequence[BotRating]) -> None:
    """Write a season's final table from ``entries`` (its final online standings) and the
    official batch fit of its results (bots that played; replaced if there is one)."""
    official = season_official_table(season=season)
    position = {b: n + 1 for n, (b, _, _) in enumerate(official)}
    fitted = {b: (r, s) for b, r, s in official}
    SeasonStanding.objects.filter(season=season).delete()
    SeasonStanding.objects.bulk_create(
        [
            SeasonStanding(
                season=season, bot_id=e.bot_id, rating=e.rating, sigma=e.sigma,
                score=conservative(e.rating, e.sigma), games=e.games, wins=e.wins,
                official_rating=fitted[e.bot_id][0], official_sigma=fitted[e.bot_id][1],
                official_position=position[e.bot_id],
            )
            for e in entries
            if e.bot_id in fitted
        ],
        batch_size=1000,
    )  # fmt: skip
