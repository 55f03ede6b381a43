"""The matchmaker: keep each of its ladders busy with matches between eligible bots.

``matchmake`` is what beat runs every ``LADDER_MATCHMAKER_INTERVAL_S`` (the
workers' ``matchmake`` task) and ``manage.py matchmake`` runs by hand. For each
ladder it counts the open (queued + running) matches; when there are fewer than
``LADDER_MATCHMAKER_TARGET`` it reads the eligible bots (``selectors``), asks the
pure planner for the missing tables with a ``random.Random`` seeded by a logged
seed (a tick can be replayed from its log line) and creates them through
``match_create``, which sends each to the workers when the transaction commits.

Two ticks may overlap (a slow tick and the next one, two beat processes by
mistake, the command next to beat). Each runs in one transaction that first
takes the matchmaker's lock — a PostgreSQL advisory transaction lock; on SQLite
the transaction is BEGIN IMMEDIATE (settings), which already serializes writers
— so the second one counts after the first one's matches are committed and
never overshoots the target or a bot's ``max_concurrent``.
"""

from __future__ import annotations

import logging
import random
import secrets
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from ladder.common.exceptions import ApplicationError
from ladder.ladders import ladder_get
from ladder.matches.creation import match_create
from ladder.matches.spec import MatchSpec
from ladder.matchmaking import selectors
from ladder.matchmaking.planner import PlannerConfig, parse_seat_mix, plan_sets
from ladder.tournaments.services import deal_create

log = logging.getLogger("ladder.matchmaking")
# One lock for every ladder: a bot's concurrent matches are counted across ladders.
LOCK_KEY = zlib.crc32(b"digdown-ladder-matchmaker")


@dataclass
class MatchmakingReport:
    """What one pass did on one ladder."""

    ladder: str
    target: int
    open_before: int
    eligible: int = 0
    seed: int = 0
    created: list[int] = field(default_factory=list)  # match ids
    tables: list[list[int]] = field(default_factory=list)  # one per match, seat order
    deals: list[int] = field(default_factory=list)  # duplicate sets created (deal ids)
    skipped: list[str] = field(default_factory=list)  # tables match_create refused, and why

    def line(self) -> str:
        if self.open_before >= self.target:
            return (
                f"matchmaker {self.ladder}: {self.open_before} open of {self.target}, nothing to do"
            )
        made = ", ".join(f"{m} {t}" for m, t in zip(self.created, self.tables, strict=True))
        text = (
            f"matchmaker {self.ladder}: {self.open_before} open of {self.target},"
            f" {self.eligible} eligible bots, created {len(self.created)}"
            f"{': ' + made if made else ''}"
            f"{f' ({len(self.deals)} duplicate sets: deals {self.deals})' if self.deals else ''}"
            f" (seed {self.seed})"
        )
        if self.skipped:
            text += f"; skipped {'; '.join(self.skipped)}"
        return text


def planner_config(*, ladder_key: str) -> PlannerConfig:
    """The planner's knobs from the settings, the seat mix cut to what the ladder plays."""
    chosen = ladder_get(ladder_key)
    assert chosen is not None
    mix = {
        n: w for n, w in parse_seat_mix(settings.LADDER_MATCHMAKER_SEATS).items() if chosen.plays(n)
    }
    if not mix:
        raise ApplicationError(
            f"LADDER_MATCHMAKER_SEATS ({settings.LADDER_MATCHMAKER_SEATS}) has no seat count"
            f" that ladder {chosen.describe()} plays"
        )
    return PlannerConfig(
        seat_mix=mix,
        max_concurrent=settings.LADDER_MATCHMAKER_MAX_CONCURRENT,
        rating_scale=settings.LADDER_MATCHMAKER_RATING_SCALE,
    )


def duplicate_share() -> float:
    """``LADDER_MATCHMAKER_DUPLICATES`` as a share of tables: off 0, on 1, or the number."""
    raw = str(settings.LADDER_MATCHMAKER_DUPLICATES).strip().lower()
    named = {"off": 0.0, "": 0.0, "0": 0.0, "on": 1.0}
    try:
        share = named[raw] if raw in named else float(raw)
    except ValueError:
        share = -1.0
    if not 0.0 <= share <= 1.0:
        raise ApplicationError(
            f"LADDER_MATCHMAKER_DUPLICATES must be off, on or a share in [0, 1], not {raw!r}"
        )
    return share


def _lock() -> None:
    """Serialize matchmaker passes until the transaction ends (see the module docstring)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [LOCK_KEY])


def matchmake(
    *,
    ladders: list[str] | None = None,
    target: int | None = None,
    seed: int | None = None,
    now: datetime | None = None,
) -> list[MatchmakingReport]:
    """Top up each ladder (default ``LADDER_MATCHMAKER_LADDERS``, else the default ladder)
    to ``target`` open matches.

    ``seed`` (default: a fresh random one, logged) seeds the planner of the
    first ladder; the next ladders use seed + 1, + 2, ...
    """
    keys = ladders or list(settings.LADDER_MATCHMAKER_LADDERS) or [settings.LADDER_DEFAULT_LADDER]
    goal = settings.LADDER_MATCHMAKER_TARGET if target is None else target
    base = secrets.randbits(63) if seed is None else seed
    since = (now or timezone.now()) - timedelta(hours=settings.LADDER_MATCHMAKER_RECENT_H)
    configs = {key: planner_config(ladder_key=key) for key in keys}
    share = duplicate_share()
    reports = []
    with transaction.atomic():
        _lock()
        for i, key in enumerate(keys):
            reports.append(_fill(key, goal, configs[key], (base + i) % 2**63, since, share))
    for report in reports:
        log.info("%s", report.line())
    return reports


def _fill(
    key: str, target: int, config: PlannerConfig, seed: int, since: datetime, share: float
) -> MatchmakingReport:
    report = MatchmakingReport(
        ladder=key, target=target, open_before=selectors.ladder_open_count(ladder=key), seed=seed
    )
    missing = target - report.open_before
    if missing <= 0:
        return report
    candidates = selectors.matchmaking_candidates(ladder=key, recent_since=since)
    report.eligible = len(candidates)
    rng = random.Random(seed)
    for planned in plan_sets(candidates, missing, rng, config, duplicate_share=share):
        try:
            if planned.duplicate:
                deal = deal_create(
                    MatchSpec(bot_ids=planned.bots, ladder=key, seed=rng.randrange(2**63))
                )
                matches = list(deal.matches.order_by("deal_rotation"))
                report.deals.append(deal.pk)
            else:
                matches = [match_create(MatchSpec(bot_ids=planned.bots, ladder=key))]
        except ApplicationError as exc:  # a bot changed since it was read (e.g. staff suspended)
            report.skipped.append(f"{planned.bots}: {exc.message}")
            continue
        for match in matches:
            report.created.append(match.pk)
            report.tables.append(
                list(match.seats.order_by("seat").values_list("bot_id", flat=True))
            )
    return report
