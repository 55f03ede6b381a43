"""REST API of ratings: ladders, leaderboards and a bot's rating history.

Thin views (HackSoft style) over ``ladder.ratings.selectors``. Every read takes
the ladder as ``?ladder=KEY`` (default: the default ladder).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db.models import QuerySet
from django.http import StreamingHttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import IsAdminUser, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param
from rest_framework.views import APIView

from ladder.accounts.rest_throttling import ExportThrottle
from ladder.bots.apis import BotOutputSerializer, LadderFilterSerializer
from ladder.bots.models import Bot
from ladder.bots.selectors import bot_get, bot_get_by_name
from ladder.common import keyset
from ladder.common.elo import points
from ladder.common.exceptions import Conflict
from ladder.common.fields import PointsField, WholeNumberField
from ladder.common.pagination import (
    MAX_PAGE_SIZE,
    PagePagination,
    WindowCountPaginator,
    with_total,
)
from ladder.common.schema import ERRORS
from ladder.ladders import Difficulty, ladder_get, ladder_list
from ladder.ratings import exports, selectors
from ladder.ratings.services import season_start


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


NARROWING = ("kind", "owner", "search", "provisional")
"""The leaderboard's filters that narrow the board (its pages are then offsets)."""


class LeaderboardApi(APIView):
    """Active bots of a ladder by rating; provisional bots are marked."""

    pagination_class = PagePagination  # the list's page shape, in the schema too

    class FilterSerializer(LadderFilterSerializer):
        kind = serializers.ChoiceField(choices=Bot.Kind.choices, required=False)
        owner = serializers.CharField(required=False, max_length=150)
        search = serializers.CharField(required=False, max_length=100)
        provisional = serializers.BooleanField(required=False, allow_null=True, default=None)
        include_inactive = serializers.BooleanField(required=False, default=False)
        cursor = serializers.CharField(
            required=False,
            allow_blank=True,
            max_length=100,
            help_text="A keyset page from a `next`/`previous` link (wins over `page`; deep pages"
            " cost what the first does).",
        )

    class OutputSerializer(BotOutputSerializer):
        position = serializers.IntegerField(help_text="1-based, within the filtered list")

    @extend_schema(
        parameters=[FilterSerializer], responses={200: OutputSerializer(many=True), **ERRORS}
    )
    def get(self, request: Request) -> Response:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        token = f.validated_data.pop("cursor", None)
        qs = selectors.leaderboard_list(**f.validated_data)
        paginator = self.pagination_class()
        if token is not None:  # the cursor wins over ?page= (both given: not an error)
            return self._keyset(request, qs, paginator, token)
        if f.validated_data.get("search"):
            # A name search reads every match to sort them: that query counts them too.
            qs = with_total(qs)
            paginator.django_paginator_class = WindowCountPaginator
        elif not any(f.validated_data.get(k) is not None for k in NARROWING):
            # The whole board: a deep page starts where the score index says, no OFFSET,
            # and the board is counted on that index too.
            where = {
                "ladder": f.validated_data.get("ladder"),
                "include_inactive": f.validated_data.get("include_inactive", False),
            }
            paginator.django_paginator_class = partial(  # type: ignore[assignment]
                keyset.SeekPaginator,
                bound=partial(selectors.leaderboard_row_at, **where),
                count=selectors.leaderboard_size(**where),
            )
        page: list[Any] = paginator.paginate_queryset(qs, request, view=self) or []
        offset = paginator.offset()
        for i, bot in enumerate(page):
            bot.position = offset + i + 1
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)

    def _keyset(
        self, request: Request, qs: QuerySet[Bot], paginator: PagePagination, token: str
    ) -> Response:
        """A keyset page in the page-number response's shape (``count`` is bounded by the
        number of bots; the links carry cursors)."""
        size = paginator.get_page_size(request) or paginator.page_size or MAX_PAGE_SIZE
        page = keyset.board_page(qs, size, token)
        for i, bot in enumerate(page.rows):
            bot.position = page.before + i + 1

        def link(cursor: str) -> str | None:
            if not cursor:
                return None
            url = request.build_absolute_uri()
            return replace_query_param(remove_query_param(url, "page"), "cursor", cursor)

        return Response(
            {
                "count": qs.count(),
                "next": link(page.next),
                "previous": link(page.previous),
                "results": self.OutputSerializer(page.rows, many=True).data,
            }
        )


class BotRatingHistoryApi(APIView):
    """A bot's rating changes on a ladder in recording order (the latest ``limit``), with
    sigma before and after (the band of the bot page's chart); ``season`` picks one."""

    class FilterSerializer(LadderFilterSerializer):
        limit = WholeNumberField(required=False, default=200, min_value=1, max_value=1000)
        season = WholeNumberField(required=False, min_value=1, max_value=100000)

    class OutputSerializer(serializers.Serializer):
        match = serializers.IntegerField(source="match_id")
        recorded = serializers.IntegerField(source="result_id", help_text="recording sequence")
        season = serializers.IntegerField()
        version = serializers.IntegerField(source="version_id", allow_null=True)
        rank = serializers.IntegerField(allow_null=True)
        rated = serializers.BooleanField()
        rating_before = PointsField()
        rating_after = PointsField()
        sigma_before = PointsField()
        sigma_after = PointsField()
        delta = serializers.SerializerMethodField()
        at = serializers.DateTimeField(source="recorded_at")

        def get_delta(self, row: Any) -> float:
            return float(points(row.rating_after - row.rating_before))

    @extend_schema(
        parameters=[FilterSerializer], responses={200: OutputSerializer(many=True), **ERRORS}
    )
    def get(self, request: Request, bot_id: int) -> Response:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        bot = bot_get(bot_id=bot_id)
        seats = selectors.bot_rating_history(bot_id=bot.pk, **f.validated_data)
        return Response(self.OutputSerializer(seats, many=True).data)


class SeasonListApi(APIView):
    """A ladder's seasons, newest first: the system each rates with and when it ran."""

    class OutputSerializer(serializers.Serializer):
        ladder = serializers.CharField()
        number = serializers.IntegerField()
        system = serializers.CharField()
        started_at = serializers.DateTimeField()
        ended_at = serializers.DateTimeField(allow_null=True)
        shrink = serializers.FloatField(help_text="share of (rating - start) kept at its start")
        finished = serializers.SerializerMethodField()

        def get_finished(self, season: Any) -> bool:
            return season.ended_at is not None

    @extend_schema(
        parameters=[LadderFilterSerializer], responses={200: OutputSerializer(many=True), **ERRORS}
    )
    def get(self, request: Request) -> Response:
        f = LadderFilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        seasons = selectors.season_list(**f.validated_data)
        return Response(self.OutputSerializer(seasons, many=True).data)


class SeasonStandingsApi(APIView):
    """A finished season's final table: official (batch ML re-rating) position and rating,
    beside the online rating it ended with."""

    pagination_class = PagePagination

    class OutputSerializer(serializers.Serializer):
        position = serializers.IntegerField(source="official_position")
        bot_id = serializers.IntegerField()
        name = serializers.CharField(source="bot.name")
        owner = serializers.CharField(source="bot.owner.username")
        official_rating = PointsField(
            help_text="batch maximum-likelihood Plackett-Luce (Elo scale)"
        )
        official_sigma = PointsField()
        rating = PointsField(help_text="the online rating the season ended with")
        sigma = PointsField()
        score = PointsField()
        games = serializers.IntegerField()
        wins = serializers.IntegerField()

    @extend_schema(
        parameters=[LadderFilterSerializer], responses={200: OutputSerializer(many=True), **ERRORS}
    )
    def get(self, request: Request, number: int) -> Response:
        f = LadderFilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        season = selectors.season_get(number=number, **f.validated_data)
        if season.ended_at is None:
            raise Conflict(f"season {number} is not finished: its table is the leaderboard")
        paginator = self.pagination_class()
        table: Any = selectors.season_table(season=season)  # a page: two index reads
        page: list[Any] = paginator.paginate_queryset(table, request, view=self) or []
        return paginator.get_paginated_response(self.OutputSerializer(page, many=True).data)


class SeasonStartApi(APIView):
    """Staff: end the ladder's current season and start the next (a soft reset)."""

    permission_classes = [IsAdminUser]

    class InputSerializer(serializers.Serializer):
        ladder = serializers.CharField(required=False, allow_blank=True, max_length=32)
        shrink = serializers.FloatField(
            required=False, min_value=0.0, max_value=1.0,
            help_text="share of (rating - start) each entry keeps (default LADDER_SEASON_SHRINK)",
        )  # fmt: skip

    @extend_schema(request=InputSerializer, responses={201: SeasonListApi.OutputSerializer})
    def post(self, request: Request) -> Response:
        f = self.InputSerializer(data=request.data)
        f.is_valid(raise_exception=True)
        key = ladder_get(f.validated_data.get("ladder") or None).key
        season = season_start(ladder=key, shrink=f.validated_data.get("shrink"))
        return Response(SeasonListApi.OutputSerializer(season).data, status=201)


class BotLineageApi(APIView):
    """A bot's versions on a ladder, newest first: each version's own rating entry and how
    far it moved from the version before it (``rating_change``, null for the first).
    ``vs_previous`` is always zero: no match seats two versions of one bot."""

    class OutputSerializer(serializers.Serializer):
        number = serializers.IntegerField()
        version_id = serializers.IntegerField()
        rating = PointsField(allow_null=True)
        sigma = PointsField(allow_null=True)
        games = serializers.IntegerField()
        wins = serializers.IntegerField()
        rating_change = PointsField(source="change", allow_null=True)
        vs_previous = serializers.SerializerMethodField()

        def get_vs_previous(self, row: Any) -> dict[str, int]:
            return {"ahead": row.ahead, "behind": row.behind, "level": row.level}

    @extend_schema(
        parameters=[LadderFilterSerializer], responses={200: OutputSerializer(many=True), **ERRORS}
    )
    def get(self, request: Request, bot_id: int) -> Response:
        f = LadderFilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        bot = bot_get(bot_id=bot_id)
        rows = selectors.bot_lineage(bot_id=bot.pk, **f.validated_data)
        return Response(self.OutputSerializer(rows, many=True).data)


class GamesExportApi(APIView):
    """The ladder's finished, revealed matches as a data set, streamed.

    ``data_format=jsonl``: one match per line with its whole replay; ``=parquet``:
    one row per decision (observation encoding, legal actions, chosen action,
    rank). At most ``LADDER_EXPORT_MAX_MATCHES`` matches per export (the limit is
    in the ``X-Export-Limit`` header; for more, narrow the date range and ask
    again), ``LADDER_EXPORT_THROTTLE`` exports per user.
    """

    permission_classes = [IsAuthenticated]
    throttle_classes = [ExportThrottle]

    class FilterSerializer(LadderFilterSerializer):
        # Not ``format``: DRF reads that query parameter as the response renderer.
        data_format = serializers.ChoiceField(choices=exports.FORMATS, default="jsonl")
        season = WholeNumberField(required=False, min_value=1, max_value=100000)
        since = serializers.DateTimeField(required=False)
        until = serializers.DateTimeField(required=False)
        min_rating = serializers.FloatField(required=False, min_value=-1e6, max_value=1e6)
        max_rating = serializers.FloatField(required=False, min_value=-1e6, max_value=1e6)
        bot = serializers.CharField(required=False, max_length=32)
        limit = WholeNumberField(required=False, min_value=1, max_value=10**9)

    @extend_schema(
        parameters=[FilterSerializer],
        responses={
            (200, "application/x-ndjson"): bytes,
            (200, "application/vnd.apache.parquet"): bytes,
            **ERRORS,
        },
    )
    def get(self, request: Request) -> StreamingHttpResponse:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        v = f.validated_data
        cap = exports.export_max_matches()
        bot_id = bot_get_by_name(name=v["bot"]).pk if v.get("bot") else None
        flt = exports.ExportFilter(
            ladder=v["ladder"],
            season=v.get("season"),
            since=v.get("since"),
            until=v.get("until"),
            min_rating=None if v.get("min_rating") is None else round(v["min_rating"] * 100),
            max_rating=None if v.get("max_rating") is None else round(v["max_rating"] * 100),
            bot_id=bot_id,
            limit=min(v.get("limit") or cap, cap),
        )
        exports.export_queryset(flt)  # a bad season is a 400 now, not a broken stream
        parquet = v["data_format"] == "parquet"
        if parquet and not exports.parquet_available():
            raise Conflict("Parquet exports need pyarrow on the server; ask for data_format=jsonl")
        response = StreamingHttpResponse(
            exports.export_chunks(flt, v["data_format"]),
            content_type="application/vnd.apache.parquet" if parquet else "application/x-ndjson",
        )
        name = f"games-{ladder_get(v['ladder'] or None).key}.{'parquet' if parquet else 'jsonl'}"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        response["X-Export-Limit"] = str(cap)
        return response
