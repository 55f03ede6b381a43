"""digdown.v1.Ladder's tournament methods: create and read tournaments; compare two versions."""

from __future__ import annotations

import grpc

from digdown.v1 import ladder_pb2
from ladder.common.exceptions import ApplicationError, Conflict, PermissionDenied
from ladder.grpc.auth import GrpcError, require_user
from ladder.grpc.lookups import bot_named as _bot_named
from ladder.grpc.messages import comparison_pb, tournament_pb
from ladder.tournaments import selectors as tournament_selectors
from ladder.tournaments import services as tournament_services
from ladder.tournaments.models import Tournament


class TournamentsServicer:
    """The tournament and version-comparison methods of ``LadderServicer``."""

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
