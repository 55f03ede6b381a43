"""Rows and reports as proto messages of digdown.v1.Ladder (what every RPC group answers)."""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import PurePosixPath

from digdown.v1 import ladder_pb2
from ladder.bots import selectors as bot_selectors
from ladder.bots.models import Bot, BotVersion
from ladder.common.elo import points
from ladder.common.exceptions import NotFound
from ladder.common.logs import log_read
from ladder.grpc.paging import page_size_of, token_number
from ladder.matches import selectors as match_selectors
from ladder.matches.models import Match, MatchSeat
from ladder.tournaments import selectors as tournament_selectors
from ladder.tournaments.models import Tournament
from ladder.tournaments.selectors import ComparisonReport

log = logging.getLogger("ladder.grpc")


def time_text(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else ""


def points_of(hundredths: int | None) -> float:
    return 0.0 if hundredths is None else points(hundredths)


def version_pb(v: BotVersion) -> ladder_pb2.BotVersion:
    return ladder_pb2.BotVersion(
        number=v.number,
        sha256=v.archive_sha256,
        size=v.archive_size,
        filename=PurePosixPath(v.archive.name).name if v.archive else "",
        status=v.status.upper(),
        validation_log=v.validation_log[:4000],
        created_at=time_text(v.created_at),
        smoke_outcome=v.smoke_outcome,
    )


def bot_pb(bot: Bot) -> ladder_pb2.LadderBot:
    """A bot from the bot selectors (rating on one ladder, current version joined)."""
    latest = bot_selectors.bot_latest_version(bot=bot)
    msg = ladder_pb2.LadderBot(
        id=bot.pk,
        name=bot.name,
        owner=bot.owner.username,
        kind=bot.kind.upper(),
        active=bot.playable,
        rating=points_of(bot.rating),  # type: ignore[attr-defined]
        games=bot.games,  # type: ignore[attr-defined]
        created_at=time_text(bot.created_at),
        ladder=bot.rating_ladder,  # type: ignore[attr-defined]
        suspended_reason=bot.suspended_reason if not bot.is_active else "",
        suspension=bot.suspension.upper() if not bot.is_active else "",
    )
    if latest is not None:
        if bot.kind == Bot.Kind.REMOTE:
            msg.endpoint = latest.endpoint
        else:
            msg.current_version.CopyFrom(version_pb(latest))
    return msg


def seat_pb(s: MatchSeat) -> ladder_pb2.MatchSeat:
    """A seat from ``match_selectors.seats_shown`` (bot and version as plain attributes)."""
    hosted = s.bot_kind == Bot.Kind.HOSTED  # type: ignore[attr-defined]
    return ladder_pb2.MatchSeat(
        seat=s.seat,
        bot=s.bot_name,  # type: ignore[attr-defined]
        version=s.version_number if hosted else 0,  # type: ignore[attr-defined]
        rank=s.rank or 0,
        score=float(s.score or 0),
        faults=s.faults,
        forfeit_reason=s.forfeit_reason,
        rating_before=points_of(s.rating_before),
        rating_after=points_of(s.rating_after),
    )


def match_pb(m: Match) -> ladder_pb2.Match:
    finished = m.status == Match.Status.FINISHED
    result = getattr(m, "result", None) if finished else None
    # The seed (and the replay it decides) would reveal the cave before the end.
    reveal = match_selectors.match_reveal(m)
    return ladder_pb2.Match(
        id=m.pk,
        ruleset=m.ruleset,
        seed=reveal.seed or 0,
        difficulty=m.difficulty,
        status=m.status.upper(),
        seats=[seat_pb(s) for s in m.seats.all()],
        end_reason=result.reason if result else "",
        turns=result.turns if result else 0,
        created_at=time_text(m.created_at),
        started_at=time_text(m.started_at),
        finished_at=time_text(m.finished_at),
        replay_sha256=reveal.replay.sha256 if reveal.replay else "",
        replay_size=reveal.replay.size if reveal.replay else 0,
        error=m.error[:2000],
        rated=m.rated,
        ladder=m.ladder,
        deal_id=m.deal_id or 0,
        deal_rotation=m.deal_rotation or 0,
        tournament_id=m.tournament_id or 0,
        tournament_round=m.tournament_round or 0,
    )


def tournament_pb(
    t: Tournament, *, page_size: int = 0, page_token: str = ""
) -> tuple[ladder_pb2.Tournament, str]:
    """A tournament with a page of its standings and of its participants (the same
    offset in both: every participant has a standing line) and the next page's token.
    The largest tournaments hold thousands of bots: a page is what the database ranks
    and sends (``tournament_standings_table``), as the REST standings are paged."""
    size = page_size_of(page_size)
    offset = token_number(page_token) or 0
    lines = tournament_selectors.tournament_standings_table(tournament=t)[
        offset : offset + size + 1
    ]
    names = list(
        t.participants.order_by("name").values_list("name", flat=True)[offset : offset + size + 1]
    )
    more = len(lines) > size or len(names) > size
    message = ladder_pb2.Tournament(
        id=t.pk,
        name=t.name,
        format=t.format.upper(),
        status=t.status.upper(),
        seats=t.seats,
        duplicate=t.duplicate,
        rated=t.rated,
        rounds=t.rounds or 0,
        ladder=t.ladder,
        participants=names[:size],
        participant_count=t.participants.count(),
        created_at=time_text(t.created_at),
        started_at=time_text(t.started_at),
        finished_at=time_text(t.finished_at),
        standings=[
            ladder_pb2.Standing(
                rank=line.standing.rank,
                bot=line.bot_name,
                points=line.standing.points,
                played=line.standing.played,
                wins=line.standing.wins,
                errored=line.standing.errored,
                byes=line.standing.byes,
                head_to_head=line.standing.head_to_head,
                buchholz=line.standing.buchholz,
            )
            for line in lines[:size]
        ],
    )
    return message, str(offset + size) if more else ""


def comparison_pb(report: ComparisonReport) -> ladder_pb2.Comparison:
    c = report.comparison
    msg = ladder_pb2.Comparison(
        id=c.pk,
        bot=c.bot.name,
        old_version=c.old_version.number,
        new_version=c.new_version.number,
        opponents=sorted(c.opponents.values_list("name", flat=True)),
        deals=c.deals,
        status=report.status.upper(),
        matches=report.matches,
        open=report.open,
        errored=report.errored,
        complete_deals=report.complete_deals,
        summary=report.summary,
    )
    r = report.result
    if r is not None:
        msg.has_result = True
        msg.old_first_share, msg.new_first_share = r.old_first_share, r.new_first_share
        msg.old_mean_rank, msg.new_mean_rank = r.old_mean_rank, r.new_mean_rank
        for field, est in (
            ("first_share_diff", r.first_share_diff),
            ("mean_rank_diff", r.mean_rank_diff),
        ):
            getattr(msg, field).CopyFrom(
                ladder_pb2.Estimate(mean=est.mean, low=est.low, high=est.high)
            )
    return msg


def log_text(name: str) -> str:
    try:
        return log_read(name).decode("utf-8", errors="replace")
    except FileNotFoundError as exc:
        log.error("log missing from storage: %s", name)
        raise NotFound("the log file is missing") from exc
