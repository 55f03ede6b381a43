"""REST API of ratings: ladders, leaderboards and a bot's rating history.

Thin views (HackSoft style) over ``ladder.ratings.selectors``. Every read takes
the ladder as ``?ladder=KEY`` (default: the default ladder).
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.bots.apis import BotOutputSerializer, LadderFilterSerializer
from ladder.bots.models import Bot
from ladder.bots.selectors import bot_get
from ladder.common.fields import PointsField, WholeNumberField
from ladder.common.pagination import PagePagination
from ladder.common.schema import ERRORS
from ladder.ladders import Difficulty, ladder_list
from ladder.ratings import selectors


class LadderListApi(APIView):
    """The configured ladders: each rates one ruleset at one difficulty, for some seat counts."""

    class OutputSerializer(serializers.Serializer):
        key = serializers.CharField()
        ruleset = serializers.CharField()
        difficulty = serializers.ChoiceField(choices=Difficulty.choices)
        min_seats = serializers.IntegerField()
        max_seats = serializers.IntegerField()
        is_default = serializers.BooleanField()

    @extend_schema(responses={200: OutputSerializer(many=True)})
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(ladder_list(), many=True).data)


class LeaderboardApi(APIView):
    """Active bots of a ladder by rating; provisional bots are marked."""

    pagination_class = PagePagination  # the list's page shape, in the schema too

    class FilterSerializer(LadderFilterSerializer):
        kind = serializers.ChoiceField(choices=Bot.Kind.choices, required=False)
        owner = serializers.CharField(required=False, max_length=150)
        search = serializers.CharField(required=False, max_length=100)
        provisional = serializers.BooleanField(required=False, allow_null=True, default=None)
        include_inactive = serializers.BooleanField(required=False, default=False)

    class OutputSerializer(BotOutputSerializer):
        position = serializers.IntegerField(help_text="1-based, within the filtered list")

    @extend_schema(
        parameters=[FilterSerializer], responses={200: OutputSerializer(many=True), **ERRORS}
    )
    def get(self, request: Request) -> Response:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        qs = selectors.leaderboard_list(**f.validated_data)
        paginator = self.pagination_class()
        page: list[Any] = paginator.paginate_queryset(qs, request, view=self) or []
        offset = paginator.offset()
        for i, bot in enumerate(page):
            bot.position = offset + i + 1
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)


class BotRatingHistoryApi(APIView):
    """A bot's rating changes on a ladder in recording order (the latest ``limit``)."""

    class FilterSerializer(LadderFilterSerializer):
        limit = WholeNumberField(required=False, default=200, min_value=1, max_value=1000)

    class OutputSerializer(serializers.Serializer):
        match = serializers.IntegerField(source="match_id")
        recorded = serializers.IntegerField(source="result_id", help_text="recording sequence")
        rank = serializers.IntegerField(allow_null=True)
        rating_before = PointsField()
        rating_after = PointsField()
        delta = PointsField(source="rating_delta")
        at = serializers.DateTimeField(source="result.recorded_at")

    @extend_schema(
        parameters=[FilterSerializer], responses={200: OutputSerializer(many=True), **ERRORS}
    )
    def get(self, request: Request, bot_id: int) -> Response:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        bot = bot_get(bot_id=bot_id)
        seats = selectors.bot_rating_history(bot_id=bot.pk, **f.validated_data)
        return Response(self.OutputSerializer(seats, many=True).data)
