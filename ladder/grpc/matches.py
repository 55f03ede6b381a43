"""digdown.v1.Ladder's match methods: list, read, replay and seat logs; request a challenge."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import grpc

from digdown.v1 import ladder_pb2
from ladder.common.exceptions import Conflict, NotFound, PermissionDenied
from ladder.grpc.auth import require_user
from ladder.grpc.lookups import bot_named as _bot_named
from ladder.grpc.messages import log_text, match_pb
from ladder.grpc.paging import page_size_of, token_number
from ladder.ladders import ladder_get
from ladder.matches import bot_selectors
from ladder.matches import selectors as match_selectors
from ladder.matches.challenges import challenge_create, challenge_seats
from ladder.matches.models import Match
from ladder.matches.replays import replay_open

log = logging.getLogger("ladder.grpc")
REPLAY_CHUNK = 64 * 1024


class MatchesServicer:
    """The match methods of ``LadderServicer``: a challenge is
    ``ladder.matches.challenges.challenge_create``, as on REST."""

    def ListMatches(
        self, request: ladder_pb2.ListMatchesRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.ListMatchesResponse:
        bot = _bot_named(request.bot)
        # A range of the bot's seats' index: the cost of a page is the bot's, not the ladder's.
        rows, before = bot_selectors.bot_match_page(
            bot_id=bot.pk,
            before=token_number(request.page_token),
            size=page_size_of(request.page_size),
        )
        return ladder_pb2.ListMatchesResponse(
            matches=[match_pb(m) for m in rows], next_page_token=str(before) if before else ""
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
        challenge_seats(named=1 + len(names), seats=request.num_seats or None)
        match = challenge_create(
            user=user,
            bot_ids=[bot.pk, *(_bot_named(n).pk for n in names)],
            seats=request.num_seats or None,
            ladder=request.ladder or None,
            difficulty=request.difficulty.strip().lower() or None,
            rated=request.rated,
        )
        return ladder_pb2.RequestChallengeResponse(
            match=match_pb(match_selectors.match_detail(match_id=match.pk))
        )

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
            text=log_text(seat.log.name),
            size=seat.log_size,
        )
