"""digdown.v1.Ladder's bot methods: create, upload, set an endpoint, reactivate, list; logs."""

from __future__ import annotations

import grpc

from digdown.v1 import ladder_pb2
from ladder.bots import selectors as bot_selectors
from ladder.bots import services as bot_services
from ladder.bots.models import Bot
from ladder.common.exceptions import ApplicationError, Conflict
from ladder.grpc.auth import GrpcError, require_user
from ladder.grpc.lookups import bot_named as _bot_named
from ladder.grpc.lookups import own_bot_named
from ladder.grpc.messages import bot_pb, log_text, version_pb


class BotsServicer:
    """The bot methods of ``LadderServicer`` (a bot author's own bots, by name)."""

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
        bot = own_bot_named(request.bot, require_user())
        if not request.filename:
            raise ApplicationError("filename is empty (name the archive: .py or .zip)")
        version = bot_services.bot_version_upload(
            user=require_user(), bot_id=bot.pk, filename=request.filename, data=request.content
        )
        return ladder_pb2.UploadVersionResponse(version=version_pb(version))

    def SetEndpoint(
        self, request: ladder_pb2.SetEndpointRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.SetEndpointResponse:
        bot = own_bot_named(request.bot, require_user())
        bot_services.bot_set_endpoint(user=require_user(), bot_id=bot.pk, endpoint=request.endpoint)
        return ladder_pb2.SetEndpointResponse(bot=bot_pb(bot_selectors.bot_get(bot_id=bot.pk)))

    def ReactivateBot(
        self, request: ladder_pb2.ReactivateBotRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.ReactivateBotResponse:
        bot = own_bot_named(request.bot, require_user())
        bot_services.bot_unsuspend(user=require_user(), bot_id=bot.pk)
        return ladder_pb2.ReactivateBotResponse(bot=bot_pb(bot_selectors.bot_get(bot_id=bot.pk)))

    def ListMyBots(
        self, request: ladder_pb2.ListMyBotsRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.ListMyBotsResponse:
        bots = bot_selectors.bot_list(
            owner=require_user(), ladder=request.ladder, with_current_version=True
        )
        return ladder_pb2.ListMyBotsResponse(bots=[bot_pb(b) for b in bots])

    def GetVersionLog(
        self, request: ladder_pb2.GetVersionLogRequest, context: grpc.ServicerContext
    ) -> ladder_pb2.BotLog:
        bot = _bot_named(request.bot)
        version = bot_selectors.bot_version_for_owner(
            user=require_user(), bot_id=bot.pk, number=request.version
        )
        text = log_text(version.smoke_log.name) if version.smoke_log.name else ""
        return ladder_pb2.BotLog(
            bot=bot.name,
            version=version.number,
            status=version.status.upper(),
            outcome=version.smoke_outcome,
            text=text,
            size=len(text.encode()),
        )
