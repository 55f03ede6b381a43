"""REST API of version comparisons: an owner asks whether a new version beats an old one.

Thin views over ``ladder.tournaments.services`` and ``.selectors``. The answer
(rank-1 share and mean rank per version, their differences with 95 % intervals,
and a plain sentence) is computed from the matches whenever it is read.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.accounts.requests import request_user
from ladder.bots.apis import LADDER_HELP
from ladder.common.fields import IdField
from ladder.common.pagination import PagePagination
from ladder.common.schema import ERRORS
from ladder.tournaments import selectors, services
from ladder.tournaments.selectors import ComparisonReport


class EstimateSerializer(serializers.Serializer):
    mean = serializers.FloatField(help_text="new minus old")
    low = serializers.FloatField(help_text="95% confidence interval, low end")
    high = serializers.FloatField(help_text="95% confidence interval, high end")
    excludes_zero = serializers.BooleanField()


class ComparisonResultSerializer(serializers.Serializer):
    deals = serializers.IntegerField()
    old_first_share = serializers.FloatField()
    new_first_share = serializers.FloatField()
    old_mean_rank = serializers.FloatField()
    new_mean_rank = serializers.FloatField()
    first_share_diff = EstimateSerializer()
    mean_rank_diff = EstimateSerializer(help_text="negative: the new version ranks better")


class ComparisonOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="comparison.id")
    bot = serializers.IntegerField(source="comparison.bot_id")
    bot_name = serializers.CharField(source="comparison.bot.name")
    old_version = serializers.IntegerField(source="comparison.old_version.number")
    new_version = serializers.IntegerField(source="comparison.new_version.number")
    opponents = serializers.SerializerMethodField()
    deals = serializers.IntegerField(source="comparison.deals", help_text="deals asked for")
    ladder = serializers.CharField(source="comparison.ladder")
    created_at = serializers.DateTimeField(source="comparison.created_at")
    status = serializers.ChoiceField(choices=["running", "finished"])
    matches = serializers.IntegerField()
    open = serializers.IntegerField(help_text="matches queued or running")
    errored = serializers.IntegerField(help_text="matches errored or cancelled (deal skipped)")
    complete_deals = serializers.IntegerField(help_text="deals counted in the answer")
    summary = serializers.CharField(help_text="the answer in one plain sentence")
    result = ComparisonResultSerializer(allow_null=True)

    def get_opponents(self, report: ComparisonReport) -> list[int]:
        return sorted(report.comparison.opponents.values_list("pk", flat=True))


class ComparisonListApi(APIView):
    """The caller's version comparisons (staff: all), newest first; ask for a new one."""

    permission_classes = [IsAuthenticated]
    pagination_class = PagePagination

    class InputSerializer(serializers.Serializer):
        bot = IdField()
        old_version = serializers.IntegerField(min_value=1, help_text="version number")
        new_version = serializers.IntegerField(min_value=1, help_text="version number")
        opponents = serializers.ListField(child=IdField(), min_length=1, max_length=3)
        deals = serializers.IntegerField(min_value=2, max_value=1000)
        ladder = serializers.CharField(
            required=False, default="", allow_blank=True, max_length=32, help_text=LADDER_HELP
        )

    @extend_schema(responses={200: ComparisonOutputSerializer(many=True), **ERRORS})
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        qs = selectors.comparison_list(user=request_user(request))
        page = paginator.paginate_queryset(qs, request, view=self)
        reports = [selectors.comparison_report(c) for c in page or []]
        return paginator.get_paginated_response(ComparisonOutputSerializer(reports, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: ComparisonOutputSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        user = request_user(request)
        comparison = services.comparison_create(
            user=user,
            bot_id=d["bot"],
            old_version=d["old_version"],
            new_version=d["new_version"],
            opponent_ids=d["opponents"],
            deals=d["deals"],
            ladder=d["ladder"],
        )
        report = selectors.comparison_get(comparison_id=comparison.pk, user=user)
        return Response(ComparisonOutputSerializer(report).data, status=status.HTTP_201_CREATED)


class ComparisonDetailApi(APIView):
    """One comparison with its answer so far (owner of the bot or staff)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: ComparisonOutputSerializer, **ERRORS})
    def get(self, request: Request, comparison_id: int) -> Response:
        report = selectors.comparison_get(comparison_id=comparison_id, user=request_user(request))
        return Response(ComparisonOutputSerializer(report).data)
