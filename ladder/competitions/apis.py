"""REST API of competitions and private tournaments (thin views over the services)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ladder.accounts.requests import request_user
from ladder.bots.apis import LADDER_HELP
from ladder.common.fields import IdField
from ladder.common.pagination import PagePagination
from ladder.common.rest_parsers import BoundedJSONParser
from ladder.common.schema import ERRORS
from ladder.competitions import following, selectors, services
from ladder.competitions.final import Format
from ladder.competitions.models import Competition

FORMATS = [f.value for f in Format]


class PhaseSerializer(serializers.Serializer):
    phase = serializers.CharField()
    at = serializers.DateTimeField(allow_null=True, help_text="when it starts (or started)")
    current = serializers.BooleanField()
    done = serializers.BooleanField()


class PlaceSerializer(serializers.Serializer):
    bot = serializers.IntegerField()
    bot_name = serializers.CharField()
    place = serializers.IntegerField()
    low = serializers.IntegerField(help_text="best place within the stated confidence")
    high = serializers.IntegerField(help_text="worst place within the stated confidence")
    score = serializers.FloatField(allow_null=True, help_text="mean share (tables)")


class TossSerializer(serializers.Serializer):
    a = serializers.IntegerField()
    b = serializers.IntegerField()
    a_name = serializers.CharField()
    b_name = serializers.CharField()
    p = serializers.FloatField(help_text="probability that a is really above b")


class PairwiseSerializer(serializers.Serializer):
    a = serializers.IntegerField()
    b = serializers.IntegerField()
    a_name = serializers.CharField()
    b_name = serializers.CharField()
    deals = serializers.IntegerField()
    share = serializers.FloatField(help_text="a's share of rotations ahead of b")
    low = serializers.FloatField()
    high = serializers.FloatField()


class ResultSerializer(serializers.Serializer):
    places = PlaceSerializer(many=True)
    coin_tosses = TossSerializer(many=True, help_text="adjacent places not settled")
    settled_places = serializers.IntegerField(help_text="leading places settled")
    pairwise = PairwiseSerializer(many=True, help_text="the top bots against each other")
    games = serializers.IntegerField()
    capped = serializers.BooleanField(help_text="stopped by the game cap, not by the evidence")


class CompetitionOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    rules = serializers.CharField()
    ladder = serializers.CharField(help_text="ladder key; empty: the default")
    entry = serializers.ChoiceField(choices=Competition.Entry.choices)
    private = serializers.BooleanField()
    phase = serializers.ChoiceField(choices=Competition.Phase.choices)
    phases = serializers.SerializerMethodField()
    entry_opens_at = serializers.DateTimeField()
    freeze_at = serializers.DateTimeField()
    final_starts_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    entries_per_user = serializers.IntegerField()
    entry_count = serializers.IntegerField()
    final_size = serializers.IntegerField()
    format = serializers.ChoiceField(choices=FORMATS)
    seats = serializers.IntegerField()
    confidence = serializers.FloatField()
    max_games = serializers.IntegerField()
    games = serializers.IntegerField(help_text="final matches recorded")
    deals_open = serializers.IntegerField()
    final = serializers.JSONField(
        source="final_view", help_text="the live bracket, groups or standings, by stage"
    )
    result = serializers.SerializerMethodField()

    @extend_schema_field(PhaseSerializer(many=True))
    def get_phases(self, competition: Competition) -> list[dict[str, Any]]:
        return PhaseSerializer(selectors.competition_phases(competition), many=True).data  # type: ignore[return-value]

    @extend_schema_field(ResultSerializer(allow_null=True))
    def get_result(self, competition: Competition) -> dict[str, Any] | None:
        rows = selectors.result_rows(competition)
        return None if rows is None else ResultSerializer(rows).data


class FinalOptions(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMATS)
    seats = serializers.IntegerField(min_value=2, max_value=4, default=2)
    ladder = serializers.CharField(
        required=False, default="", allow_blank=True, max_length=32, help_text=LADDER_HELP
    )
    confidence = serializers.FloatField(min_value=0.5, max_value=0.999, default=0.95)
    min_deals = serializers.IntegerField(min_value=1, max_value=50, default=2)
    max_games = serializers.IntegerField(min_value=2, max_value=10**6, default=2000)
    matchup_max_deals = serializers.IntegerField(min_value=1, max_value=500, default=16)
    group_max_deals = serializers.IntegerField(min_value=1, max_value=500, default=12)
    top = serializers.IntegerField(min_value=1, max_value=256, default=4)
    advance = serializers.IntegerField(min_value=1, max_value=3, default=2)
    first_stage = serializers.ChoiceField(choices=["swiss", "groups"], default="swiss")
    finalists = serializers.IntegerField(min_value=2, max_value=256, default=4)


class CompetitionListApi(APIView):
    """Public competitions (``?private=1``: your private tournaments); staff create one."""

    pagination_class = PagePagination

    class InputSerializer(FinalOptions):
        name = serializers.CharField(max_length=100)
        rules = serializers.CharField(max_length=20000, allow_blank=True, default="")
        entry = serializers.ChoiceField(choices=Competition.Entry.choices, default="open")
        entry_opens_at = serializers.DateTimeField()
        freeze_at = serializers.DateTimeField()
        final_starts_at = serializers.DateTimeField()
        entries_per_user = serializers.IntegerField(min_value=1, max_value=20, default=1)
        final_size = serializers.IntegerField(min_value=2, max_value=256, default=16)

    class FilterSerializer(serializers.Serializer):
        private = serializers.BooleanField(required=False, default=False)

    @extend_schema(
        parameters=[FilterSerializer], responses={200: CompetitionOutputSerializer(many=True)}
    )
    def get(self, request: Request) -> Response:
        f = self.FilterSerializer(data=request.query_params)
        f.is_valid(raise_exception=True)
        qs = selectors.competition_list(user=request.user, private=f.validated_data["private"])  # type: ignore[arg-type]
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(CompetitionOutputSerializer(page, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: CompetitionOutputSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        competition = services.competition_create(user=request_user(request), **s.validated_data)
        out = selectors.competition_get(competition_id=competition.pk)
        return Response(CompetitionOutputSerializer(out).data, status=status.HTTP_201_CREATED)


class CompetitionDetailApi(APIView):
    """One competition: phases with dates, the final's live view, the result."""

    @extend_schema(responses={200: CompetitionOutputSerializer, 404: ERRORS[404]})
    def get(self, request: Request, competition_id: int) -> Response:
        competition = selectors.competition_get(competition_id=competition_id)
        return Response(CompetitionOutputSerializer(competition).data)


class EntryOutputSerializer(serializers.Serializer):
    bot = serializers.IntegerField(source="bot_id")
    bot_name = serializers.CharField(source="bot.name")
    owner = serializers.CharField(source="owner.username")
    entered_at = serializers.DateTimeField()
    version = serializers.IntegerField(
        source="version.number",
        allow_null=True,
        default=None,
        help_text="the version the freeze locked for the final",
    )
    seed = serializers.IntegerField(allow_null=True, help_text="qualification place")
    finalist = serializers.BooleanField()
    place = serializers.IntegerField(allow_null=True)
    place_low = serializers.IntegerField(allow_null=True)
    place_high = serializers.IntegerField(allow_null=True)


class CompetitionEntriesApi(APIView):
    """A competition's entries (paged); enter one of your bots while entry is open."""

    pagination_class = PagePagination

    class InputSerializer(serializers.Serializer):
        bot = IdField()

    @extend_schema(responses={200: EntryOutputSerializer(many=True), 404: ERRORS[404]})
    def get(self, request: Request, competition_id: int) -> Response:
        competition = selectors.competition_get(competition_id=competition_id)
        paginator = self.pagination_class()
        qs = selectors.competition_entries(competition=competition)
        page = paginator.paginate_queryset(qs, request, view=self)
        return paginator.get_paginated_response(EntryOutputSerializer(page, many=True).data)

    @extend_schema(request=InputSerializer, responses={201: EntryOutputSerializer, **ERRORS})
    def post(self, request: Request, competition_id: int) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        entry = services.competition_enter(
            user=request_user(request),
            competition_id=competition_id,
            bot_id=s.validated_data["bot"],
        )
        return Response(EntryOutputSerializer(entry).data, status=status.HTTP_201_CREATED)


class FollowOutputSerializer(serializers.Serializer):
    following = serializers.BooleanField(
        help_text="told of its phases and result (e-mail, webhook: your notification choices)"
    )


class CompetitionFollowApi(APIView):
    """Follow a public competition without entering it: you are told when entry opens,
    when submissions freeze, when the final starts and its result, as its entrants are."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={200: FollowOutputSerializer, **ERRORS})
    def get(self, request: Request, competition_id: int) -> Response:
        followed = following.competition_followed(
            user=request_user(request), competition_id=competition_id
        )
        return Response(FollowOutputSerializer({"following": followed}).data)

    @extend_schema(
        request=None, responses={201: FollowOutputSerializer, 200: FollowOutputSerializer, **ERRORS}
    )
    def post(self, request: Request, competition_id: int) -> Response:
        new = following.competition_follow(
            user=request_user(request), competition_id=competition_id
        )
        return Response(
            FollowOutputSerializer({"following": True}).data,
            status=status.HTTP_201_CREATED if new else status.HTTP_200_OK,
        )

    @extend_schema(responses={204: None, **ERRORS})
    def delete(self, request: Request, competition_id: int) -> Response:
        following.competition_unfollow(user=request_user(request), competition_id=competition_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CompetitionEntryApi(APIView):
    """Withdraw an entry while entry is open (its owner or staff)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={204: None, **ERRORS})
    def delete(self, request: Request, competition_id: int, bot_id: int) -> Response:
        services.competition_withdraw(
            user=request_user(request), competition_id=competition_id, bot_id=bot_id
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class InvitationOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    competition = serializers.IntegerField(source="competition_id")
    user = serializers.CharField(source="user.username")
    bot = serializers.IntegerField(source="bot_id", allow_null=True)
    accepted_at = serializers.DateTimeField(allow_null=True)


class CompetitionInvitationsApi(APIView):
    """Invite: staff invite a user (``username``) to an invitation-only competition; a private
    tournament's creator invites a bot (``bot``), which its owner accepts."""

    permission_classes = [IsAuthenticated]
    # JSON only: a form's empty ``username`` reads as no username (DRF's rule for forms),
    # so a blank name beside a bot would pass where the schema promises a refusal.
    parser_classes = [BoundedJSONParser]

    class InputSerializer(serializers.Serializer):
        username = serializers.CharField(max_length=150, required=False)
        bot = IdField(required=False)

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if ("username" in attrs) == ("bot" in attrs):
                raise serializers.ValidationError("give username or bot")
            return attrs

    @extend_schema(request=InputSerializer, responses={201: InvitationOutputSerializer, **ERRORS})
    def post(self, request: Request, competition_id: int) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        user = request_user(request)
        d = s.validated_data
        if "bot" in d:
            invitation = services.private_invite(
                user=user, competition_id=competition_id, bot_id=d["bot"]
            )
        else:
            invitation = services.competition_invite(
                user=user, competition_id=competition_id, username=d["username"]
            )
        return Response(InvitationOutputSerializer(invitation).data, status=status.HTTP_201_CREATED)


class InvitationAcceptApi(APIView):
    """Accept an invitation of your bot into a private tournament: the bot is entered."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={201: EntryOutputSerializer, **ERRORS})
    def post(self, request: Request, invitation_id: int) -> Response:
        entry = services.private_invitation_accept(
            user=request_user(request), invitation_id=invitation_id
        )
        return Response(EntryOutputSerializer(entry).data, status=status.HTTP_201_CREATED)


class PrivateTournamentListApi(APIView):
    """Create a private tournament among your bots (more by invitation); a daily quota."""

    permission_classes = [IsAuthenticated]

    class InputSerializer(FinalOptions):
        name = serializers.CharField(max_length=100)
        bots = serializers.ListField(child=IdField(), min_length=1, max_length=64)

    @extend_schema(request=InputSerializer, responses={201: CompetitionOutputSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        s = self.InputSerializer(data=request.data)
        s.is_valid(raise_exception=True)
        d = dict(s.validated_data)
        competition = services.private_tournament_create(
            user=request_user(request), bot_ids=d.pop("bots"), **d
        )
        out = selectors.competition_get(competition_id=competition.pk)
        return Response(CompetitionOutputSerializer(out).data, status=status.HTTP_201_CREATED)


class PrivateTournamentStartApi(APIView):
    """Start your private tournament's final now (versions locked, first deals queued)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: CompetitionOutputSerializer, **ERRORS})
    def post(self, request: Request, competition_id: int) -> Response:
        services.private_tournament_start(user=request_user(request), competition_id=competition_id)
        out = selectors.competition_get(competition_id=competition_id)
        return Response(CompetitionOutputSerializer(out).data)
