"""REST API of tournaments, duplicate deals and version comparisons.

Thin views over ``ladder.tournaments.services`` and ``.selectors``. Staff create
tournaments; anyone reads them, their standings and participants, and deals.
An owner asks whether a new version beats an old one: the answer (rank-1 share
and mean rank per version, their differences with 95 % intervals, and a plain
sentence) is computed from the matches whenever it is read.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.accounts.requests import request_user
from ladder.bots.apis import LADDER_HELP, BotOutputSerializer, LadderFilterSerializer
from ladder.common.fields import IdField
from ladder.common.pagination import PagePagination
from ladder.common.schema import ERRORS
from ladder.matches.apis import DealMatchSerializer
from ladder.tournaments import selectors, services
from ladder.tournaments.models import Tournament
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


class DealResultSerializer(serializers.Serializer):
    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField()
    ranks = serializers.ListField(
        child=serializers.IntegerField(allow_null=True),
        help_text="rank in each rotation (null: not finished)",
    )
    firsts = serializers.IntegerField()
    mean_rank = serializers.FloatField(allow_null=True)
    points = serializers.FloatField(help_text="pairwise: 1 per opponent out-ranked, ½ per tie")


class DealOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="deal.id")
    seats = serializers.IntegerField(source="deal.seats")
    complete = serializers.BooleanField()
    tournament = serializers.IntegerField(source="deal.tournament_id", allow_null=True)
    comparison = serializers.IntegerField(source="deal.comparison_id", allow_null=True)
    matches = DealMatchSerializer(many=True)
    results = DealResultSerializer(many=True, help_text="each bot over the set, best first")


class DealDetailApi(APIView):
    """A duplicate deal: one cave played once per seat rotation, and each bot's result
    over the set."""

    @extend_schema(responses={200: DealOutputSerializer, 404: ERRORS[404]})
    def get(self, request: Request, deal_id: int) -> Response:
        return Response(DealOutputSerializer(selectors.deal_get(deal_id=deal_id)).data)


class TournamentOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    format = serializers.ChoiceField(choices=Tournament.Format.choices)
    status = serializers.ChoiceField(choices=Tournament.Status.choices)
    seats = serializers.IntegerField()
    duplicate = serializers.BooleanField(help_text="each table plays a duplicate deal")
    rated = serializers.BooleanField(help_text="whether its matches change ladder ratings")
    rounds = serializers.IntegerField(allow_null=True, help_text="Swiss: rounds to play")
    ladder = serializers.CharField(help_text="ladder whose game it plays; empty: the default")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    participant_count = serializers.IntegerField()


class TournamentListApi(APIView):
    """Tournaments newest first with their size; the bots are under ``participants/``.
    Staff create one (POST): it is scheduled at once and played before ladder matches."""

    pagination_class = PagePagination  # the list's page shape, in the schema too

    class InputSerializer(serializers.Serializer):
        name = serializers.CharField(max_length=100)
        format = serializers.ChoiceField(
            choices=Tournament.Format.choices, default=Tournament.Format.ROUND_ROBIN
        )
        participants = serializers.ListField(child=IdField(), min_length=2, max_length=256)
        seats = serializers.IntegerField(min_value=2, max_value=4, default=2)
        duplicate = serializers.BooleanField(default=False)
        rated = serializers.BooleanField(default=False)
        rounds = serializers.IntegerField(min_value=1, max_value=255, required=False)
        ladder = serializers.CharField(
            required=False, default="", allow_blank=True, max_length=32, help_text=LADDER_HELP
        )

    # Reading is public, creating needs a signed-in user (the default
    # IsAuthenticatedOrReadOnly, which the schema states); the service checks staff.
    @extend_schema(responses={200: TournamentOutputSerializer(many=True)})
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(selectors.tournament_list(), request, view=self)
        return paginator.get_paginated_response(TournamentOutputSerializer(page, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: TournamentOutputSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = s.validated_data
        tournament = services.tournament_create(
            name=d["name"],
            participant_ids=d["participants"],
            format=d["format"],
            seats=d["seats"],
            duplicate=d["duplicate"],
            rated=d["rated"],
            rounds=d.get("rounds"),
            ladder=d["ladder"],
            created_by=request_user(request),
        )
        return Response(
            TournamentOutputSerializer(selectors.tournament_get(tournament_id=tournament.pk)).data,
            status=status.HTTP_201_CREATED,
        )


class TournamentDetailApi(APIView):
    """One tournament."""

    @extend_schema(responses={200: TournamentOutputSerializer, 404: ERRORS[404]})
    def get(self, request: Request, tournament_id: int) -> Response:
        tournament = selectors.tournament_get(tournament_id=tournament_id)
        return Response(TournamentOutputSerializer(tournament).data)


class StandingOutputSerializer(serializers.Serializer):
    rank = serializers.IntegerField(source="standing.rank", help_text="shared when tied")
    bot = serializers.IntegerField(source="standing.bot")
    bot_name = serializers.CharField()
    points = serializers.FloatField(
        source="standing.points", help_text="1 per opponent out-ranked, ½ per tie, 1 per bye"
    )
    played = serializers.IntegerField(source="standing.played")
    wins = serializers.IntegerField(source="standing.wins", help_text="first places")
    errored = serializers.IntegerField(source="standing.errored")
    byes = serializers.IntegerField(source="standing.byes")
    head_to_head = serializers.FloatField(source="standing.head_to_head")
    buchholz = serializers.FloatField(source="standing.buchholz")


class TournamentStandingsApi(APIView):
    """A tournament's standings from its matches, best first, with their tie-breaks
    (points; head-to-head; Buchholz for Swiss; first places); final once finished.
    Paged (``page``, ``page_size``; 50 lines a page by default): the largest tournaments
    hold thousands of bots, and the database reads and ranks only a page's lines."""

    pagination_class = PagePagination  # the list's page shape, in the schema too

    @extend_schema(responses={200: StandingOutputSerializer(many=True), 404: ERRORS[404]})
    def get(self, request: Request, tournament_id: int) -> Response:
        tournament = selectors.tournament_get(tournament_id=tournament_id)
        table = selectors.tournament_standings_table(tournament=tournament)
        paginator = self.pagination_class()
        page: list[Any] | None = paginator.paginate_queryset(table, request, view=self)  # type: ignore[arg-type]
        return paginator.get_paginated_response(StandingOutputSerializer(page, many=True).data)


class TournamentParticipantsApi(APIView):
    """A tournament's bots by name, with their rating on a ladder."""

    pagination_class = PagePagination  # the list's page shape, in the schema too

    @extend_schema(
        parameters=[LadderFilterSerializer],
        responses={200: BotOutputSerializer(many=True), 404: ERRORS[404]},
    )
    def get(self, request: Request, tournament_id: int) -> Response:
        f = LadderFilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        tournament = selectors.tournament_get(tournament_id=tournament_id)
        qs = selectors.tournament_participants(tournament=tournament, **f.validated_data)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(BotOutputSerializer(page, many=True).data)
