"""digdown.v1.Ladder: a thin layer over the ladder's services and selectors.

Each method translates the request into one service or selector call and the
result into proto messages; authorization rules live in the services (the
REST API enforces the same ones), errors are mapped by ``auth.CallGuard``.
Bots are addressed by name here (bot authors think in names). Reads run a
fixed number of queries whatever the page or data size: the selectors join
what the messages show, leaderboard pages are keyset pages over the board index
(``ladder.common.keyset``; numeric offset tokens from older clients still read),
match pages are keyset pages by id.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from datetime import datetime
from functools import partial
from pathlib import PurePosixPath
from typing import Any

import grpc
from django.db.models import QuerySet

from digdown import rulesets
from digdown.v1 import game_pb2, ladder_pb2, ladder_pb2_grpc
from ladder.bots import presence
from ladder.bots import selectors as bot_selectors
from ladder.bots import services as bot_services
from ladder.bots.models import Bot, BotVersion
from ladder.common import keyset
from ladder.common.elo import points
from ladder.common.exceptions import ApplicationError, Conflict, NotFound, PermissionDenied
from ladder.common.logs import log_read
from ladder.grpc.auth import GrpcError, require_user
from ladder.grpc.competitions import CompetitionsServicer
from ladder.grpc.lookups import bot_named as _bot_named
from ladder.grpc.lookups import own_bot_named
from ladder.ladders import ladder_default, ladder_get, ladder_list
from ladder.matches import selectors as match_selectors
from ladder.matches import services as match_services
from ladder.matches.models import Match, MatchSeat
from ladder.matches.replays import replay_open
from ladder.matches.spec import MatchSpec
from ladder.ratings.selectors import (
    leaderboard_list,
    leaderboard_row_at,
    opponents_near,
    rating_uncertainty,
)
from ladder.tournaments import selectors as tournament_selectors
from ladder.tournaments import services as tournament_services
from ladder.tournaments.models import Tournament
from ladder.tournaments.selectors import ComparisonReport

log = logging.getLogger("ladder.grpc")

DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
TOKEN_PATTERN = re.compile(r"[0-9]{1,18}")
REPLAY_CHUNK = 64 * 1024


# --- conversions ------------------------------------------------------------------


def _time(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else ""


def _points(hundredths: int | None) -> float:
    return 0.0 if hundredths is None else points(hundredths)


def _page_size(page_size: int) -> int:
    if page_size < 0:
        raise ApplicationError("page_size must not be negative")
    return min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def _token_number(page_token: str) -> int | None:
    """The number in a page token this server issued (None for the first page)."""
    if not page_token:
        return None
    if not TOKEN_PATTERN.fullmatch(page_token):
        raise ApplicationError("page_token is not one this server issued")
    return int(page_token)


def _offset_page(
    qs: QuerySet[Any],
    page_size: int,
    page_token: str,
    *,
    bound: Callable[[int], tuple[int, int] | None] | None = None,
) -> tuple[list[Any], int, str]:
    """A page by offset (for lists bounded by the number of bots): rows, offset, next token.
    ``bound`` (a board in its own order: ``keyset.SeekPaginator``'s) finds the row before
    the offset on an index instead of an OFFSET over ``qs``."""
    size = _page_size(page_size)
    offset = _token_number(page_token) or 0
    row = bound(offset) if bound is not None and offset else None
    if row is not None:
        rows = list(qs.filter(keyset.after(*row))[: size + 1])
    else:
        rows = list(qs[offset : offset + size + 1])
    return rows[:size], offset, str(offset + size) if len(rows) > size else ""


def _newest_first_page(qs: QuerySet[Any], page_size: int, page_token: str) -> tuple[list[Any], str]:
    """A keyset page by descending id: the token is the last id shown (no OFFSET)."""
    size = _page_size(page_size)
    before = _token_number(page_token)
    if before is not None:
        qs = qs.filter(pk__lt=before)
    rows = list(qs.order_by("-pk")[: size + 1])
    return rows[:size], str(rows[size - 1].pk) if len(rows) > size else ""


def version_pb(v: BotVersion) -> ladder_pb2.BotVersion:
    return ladder_pb2.BotVersion(
        number=v.number,
        sha256=v.archive_sha256,
        size=v.archive_size,
        filename=PurePosixPath(v.archive.name).name if v.archive else "",
        status=v.status.upper(),
        validation_log=v.validation_log[:4000],
        created_at=_time(v.created_at),
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
        rating=_points(bot.rating),  # type: ignore[attr-defined]
        games=bot.games,  # type: ignore[attr-defined]
        created_at=_time(bot.created_at),
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
        rating_before=_points(s.rating_before),
        rating_after=_points(s.rating_after),
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
        created_at=_time(m.created_at),
        started_at=_time(m.started_at),
        finished_at=_time(m.finished_at),
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
    size = _page_size(page_size)
    offset = _token_number(page_token) or 0
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
        created_at=_time(t.created_at),
        started_at=_time(t.started_at),
        finished_at=_time(t.finished_at),
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


# --- lookups ----------------------------------------------------------------------


def _playable_now(bots: list[Bot]) -> list[Bot]:
    """``bots`` without the connected ones that hold no open stream (order kept)."""
    connected = presence.connected_bot_ids(b.pk for b in bots if b.kind == Bot.Kind.CONNECTED)
    return [b for b in bots if b.kind != Bot.Kind.CONNECTED or b.pk in connected]


def _own_bot_named(name: str) -> Bot:
    """A bot the caller owns: NOT_FOUND if unknown, PERMISSION_DENIED if someone else's."""
    return own_bot_named(name, require_user())


class LadderServicer(CompetitionsServicer, ladder_pb2_grpc.LadderServicer):
    """digdown.v1.Ladder over services and selectors (errors are mapped by CallGuard)."""

    def Play(self, request_iterator: Any, context: grpc.ServicerContext) -> Any:
        """Not served here: ``LadderServer`` serves Play as a coroutine (``play_call``)."""
        raise GrpcError(grpc.StatusCode.UNIMPLEMENTED, "Play is served by ladder.grpc.play_call")

    def CreateBot(
        self, request: ladder_pb2.CreateBotRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.CreateBotResponse:
        kind = request.kind.strip().lower()
        if kind not in Bot.Kind.values:
            raise ApplicationError("kind must be HOSTED, REMOTE or CONNECTED")
        try:
            bot = bot_services.bot_create(
                owner=require_user(),
                name=request.name,
                kind=kind,
                endpoint=request.endpoint or None,
            )
        except Conflict as exc:  # bot_create raises Conflict only for a taken name
            raise GrpcError(grpc.StatusCode.ALREADY_EXISTS, exc.message) from exc
        return ladder_pb2.CreateBotResponse(bot=bot_pb(bot_selectors.bot_get(bot_id=bot.pk)))

    def UploadVersion(
        self, request: ladder_pb2.UploadVersionRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.UploadVersionResponse:
        bot = _own_bot_named(request.bot)
        if not request.filename:
            raise ApplicationError("filename is empty (name the archive: .py or .zip)")
        version = bot_services.bot_version_upload(
            user=require_user(), bot_id=bot.pk, filename=request.filename, data=request.content
        )
        return ladder_pb2.UploadVersionResponse(version=version_pb(version))

    def SetEndpoint(
        self, request: ladder_pb2.SetEndpointRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.SetEndpointResponse:
        bot = _own_bot_named(request.bot)
        bot_services.bot_set_endpoint(user=require_user(), bot_id=bot.pk, endpoint=request.endpoint)
        return ladder_pb2.SetEndpointResponse(bot=bot_pb(bot_selectors.bot_get(bot_id=bot.pk)))

    def ReactivateBot(
        self, request: ladder_pb2.ReactivateBotRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.ReactivateBotResponse:
        bot = _own_bot_named(request.bot)
        bot_services.bot_unsuspend(user=require_user(), bot_id=bot.pk)
        return ladder_pb2.ReactivateBotResponse(bot=bot_pb(bot_selectors.bot_get(bot_id=bot.pk)))

    def ListMyBots(
        self, request: ladder_pb2.ListMyBotsRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.ListMyBotsResponse:
        bots = bot_selectors.bot_list(
            owner=require_user(), ladder=request.ladder, with_current_version=True
        )
        return ladder_pb2.ListMyBotsResponse(bots=[bot_pb(b) for b in bots])

    def ListLadders(
        self, request: ladder_pb2.ListLaddersRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.ListLaddersResponse:
        return ladder_pb2.ListLaddersResponse(
            ladders=[
                ladder_pb2.LadderInfo(
                    key=lad.key,
                    ruleset=lad.ruleset,
                    difficulty=lad.difficulty,
                    min_seats=lad.min_seats,
                    max_seats=lad.max_seats,
                    is_default=lad.is_default,
                )
                for lad in ladder_list()
            ]
        )

    def Leaderboard(
        self, request: ladder_pb2.LeaderboardRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.LeaderboardResponse:
        ladder = ladder_get(request.ladder)
        qs = leaderboard_list(include_inactive=request.include_inactive, ladder=ladder.key)
        if request.page_token and not request.page_token.startswith(keyset.PREFIX):
            # A numeric token from before keyset pages: an offset, once, found on the
            # score index (``leaderboard_row_at``), then a keyset page from there.
            rows, offset, next_token = _offset_page(
                qs,
                request.page_size,
                request.page_token,
                bound=partial(
                    leaderboard_row_at,
                    ladder=ladder.key,
                    include_inactive=request.include_inactive,
                ),
            )
            if next_token and rows:
                last = rows[-1]
                next_token = keyset.Cursor(True, last.score, last.pk, offset + len(rows)).encode()
        else:
            if request.page_token and keyset.decode(request.page_token) is None:
                raise ApplicationError("page_token is not one this server issued")
            page = keyset.board_page(qs, _page_size(request.page_size), request.page_token)
            rows, offset, next_token = page.rows, page.before, page.next
        entries = []
        for i, b in enumerate(rows):
            u = rating_uncertainty(rating=b.rating, games=b.games, sigma=b.sigma)
            low, high = u.interval95 or (0.0, 0.0)
            entries.append(
                ladder_pb2.LeaderboardEntry(
                    position=offset + i + 1,
                    bot=b.name,
                    owner=b.owner.username,
                    rating=_points(b.rating),
                    games=b.games,
                    wins=b.wins,
                    provisional=u.provisional,
                    interval_low=low,
                    interval_high=high,
                    sigma=_points(b.sigma),
                    rank_rating=_points(b.score),
                )
            )
        return ladder_pb2.LeaderboardResponse(
            entries=entries, next_page_token=next_token, ladder=ladder.key
        )

    def ListMatches(
        self, request: ladder_pb2.ListMatchesRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.ListMatchesResponse:
        bot = _bot_named(request.bot)
        qs = match_selectors.bot_matches(bot_id=bot.pk, seats=False)
        rows, next_token = _newest_first_page(qs, request.page_size, request.page_token)
        match_selectors.with_seat_rows(rows)
        return ladder_pb2.ListMatchesResponse(
            matches=[match_pb(m) for m in rows], next_page_token=next_token
        )

    def GetMatch(
        self, request: ladder_pb2.GetMatchRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.GetMatchResponse:
        match = match_selectors.match_detail(match_id=request.match_id)
        return ladder_pb2.GetMatchResponse(match=match_pb(match))

    def DownloadReplay(
        self, request: ladder_pb2.DownloadReplayRequest, context: grpc.ServicerContext
    ) -> Iterator[ladder_pb2.ReplayChunk]:
        match = match_selectors.match_detail(match_id=request.match_id)
        reveal = match_selectors.match_reveal(match)
        if match.status != Match.Status.FINISHED:
            raise Conflict(
                f"match {match.pk} is {match.status}: only a finished match has a replay"
            )
        if not reveal.stored:
            raise NotFound(f"match {match.pk} has no replay")
        if reveal.replay is None:
            raise Conflict(reveal.hidden)
        try:
            fh = replay_open(reveal.replay.name)
        except FileNotFoundError as exc:
            log.error("replay of match %s missing from storage: %s", match.pk, reveal.replay.name)
            raise NotFound(f"the replay file of match {match.pk} is missing") from exc
        with fh:
            offset = 0
            while True:
                data = fh.read(REPLAY_CHUNK)
                if not data and offset:
                    break
                chunk = ladder_pb2.ReplayChunk(data=data, offset=offset)
                if offset == 0:
                    chunk.total_size = reveal.replay.size
                    chunk.sha256 = reveal.replay.sha256
                    chunk.content_type = "application/gzip"
                yield chunk
                offset += len(data)
                if not data or not context.is_active():
                    break

    def RequestChallenge(
        self, request: ladder_pb2.RequestChallengeRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.RequestChallengeResponse:
        user = require_user()
        ladder = ladder_get(request.ladder)
        bot = _bot_named(request.bot, ladder.key)
        if bot.owner_id != user.pk and not user.is_staff:
            raise PermissionDenied(f"bot {bot.name} belongs to another user")
        names = list(request.opponents)
        if len(names) > 3:
            raise ApplicationError("at most 3 opponents")
        seats = request.num_seats or (1 + len(names) if names else 2)
        if not 2 <= seats <= 4:
            raise ApplicationError("num_seats must be 2 to 4")
        if names and seats != 1 + len(names):
            raise ApplicationError(f"num_seats {seats} does not match {len(names)} opponents")
        if names:
            opponents = [_bot_named(n) for n in names]
        else:
            # Connected bots without an open stream cannot play: look further, keep the others.
            near = opponents_near(bot=bot, count=4 * (seats - 1), ladder=ladder)
            opponents = _playable_now(near)[: seats - 1]
            if len(opponents) < seats - 1:
                raise Conflict(
                    f"only {len(opponents)} other playable bots near {bot.name} on ladder"
                    f" {ladder.key}; {seats - 1} needed"
                )
        offline = [b.name for b in (bot, *opponents) if b not in _playable_now([bot, *opponents])]
        if offline:
            raise Conflict(
                f"connected bot(s) {', '.join(offline)} hold no open Play stream: connect first"
            )
        match = match_services.match_create(
            MatchSpec(
                bot_ids=[bot.pk, *(o.pk for o in opponents)],
                requested_by=user,
                ladder=request.ladder or None,
                difficulty=request.difficulty.strip().lower() or None,
                rated=request.rated,
            )
        )
        return ladder_pb2.RequestChallengeResponse(
            match=match_pb(match_selectors.match_detail(match_id=match.pk))
        )

    def CreateTournament(
        self, request: ladder_pb2.CreateTournamentRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.TournamentResponse:
        user = require_user()
        if not user.is_staff:
            raise PermissionDenied("only staff can create tournaments")
        fmt = request.format.strip().lower() or Tournament.Format.ROUND_ROBIN
        if fmt not in Tournament.Format.values:
            raise ApplicationError("format must be ROUND_ROBIN or SWISS")
        if len(request.participants) > 256:
            raise ApplicationError("at most 256 participants")
        bots = [_bot_named(name) for name in request.participants]
        try:
            tournament = tournament_services.tournament_create(
                name=request.name,
                participant_ids=[b.pk for b in bots],
                format=fmt,
                seats=request.seats or 2,
                duplicate=request.duplicate,
                rated=request.rated,
                rounds=request.rounds or None,
                ladder=request.ladder,
                created_by=user,
            )
        except Conflict as exc:
            if "exists" in exc.message:
                raise GrpcError(grpc.StatusCode.ALREADY_EXISTS, exc.message) from exc
            raise
        message, next_token = tournament_pb(
            tournament_selectors.tournament_get(tournament_id=tournament.pk)
        )
        return ladder_pb2.TournamentResponse(tournament=message, next_page_token=next_token)

    def GetTournament(
        self, request: ladder_pb2.GetTournamentRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.TournamentResponse:
        tournament = tournament_selectors.tournament_get(tournament_id=request.tournament_id)
        message, next_token = tournament_pb(
            tournament, page_size=request.page_size, page_token=request.page_token
        )
        return ladder_pb2.TournamentResponse(tournament=message, next_page_token=next_token)

    def CompareVersions(
        self, request: ladder_pb2.CompareVersionsRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.ComparisonResponse:
        user = require_user()
        bot = _bot_named(request.bot)
        if len(request.opponents) > 3:
            raise ApplicationError("at most 3 opponents")
        opponents = [_bot_named(name) for name in request.opponents]
        comparison = tournament_services.comparison_create(
            user=user,
            bot_id=bot.pk,
            old_version=request.old_version,
            new_version=request.new_version,
            opponent_ids=[o.pk for o in opponents],
            deals=request.deals,
            ladder=request.ladder,
        )
        report = tournament_selectors.comparison_get(comparison_id=comparison.pk, user=user)
        return ladder_pb2.ComparisonResponse(comparison=comparison_pb(report))

    def GetComparison(
        self, request: ladder_pb2.GetComparisonRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.ComparisonResponse:
        report = tournament_selectors.comparison_get(
            comparison_id=request.comparison_id, user=require_user()
        )
        return ladder_pb2.ComparisonResponse(comparison=comparison_pb(report))

    def GetSeatLog(
        self, request: ladder_pb2.GetSeatLogRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.BotLog:
        seat = match_selectors.match_seat_log_for_owner(
            user=require_user(), match_id=request.match_id, seat=request.seat
        )
        return ladder_pb2.BotLog(
            bot=seat.bot.name,
            version=seat.version.number,
            match_id=seat.match_id,
            seat=seat.seat,
            text=_log_text(seat.log.name),
            size=seat.log_size,
        )

    def GetVersionLog(
        self, request: ladder_pb2.GetVersionLogRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.BotLog:
        bot = _bot_named(request.bot)
        version = bot_selectors.bot_version_for_owner(
            user=require_user(), bot_id=bot.pk, number=request.version
        )
        text = _log_text(version.smoke_log.name) if version.smoke_log.name else ""
        return ladder_pb2.BotLog(
            bot=bot.name,
            version=version.number,
            status=version.status.upper(),
            outcome=version.smoke_outcome,
            text=text,
            size=len(text.encode()),
        )

    def GetRuleset(
        self, request: game_pb2.GetRulesetRequest, context: grpc.ServicerContext
    ) -> game_pb2.GetRulesetResponse:
        """The ruleset document of the SDK this ladder runs (the same text as the engine's)."""
        default = ladder_default().ruleset
        try:
            return rulesets.ruleset_response(
                request.ruleset, default, rulesets.text, rulesets.available()
            )
        except KeyError as exc:
            raise NotFound(exc.args[0]) from None


def _log_text(name: str) -> str:
    try:
        return log_read(name).decode("utf-8", errors="replace")
    except FileNotFoundError as exc:
        log.error("log missing from storage: %s", name)
        raise NotFound("the log file is missing") from exc
