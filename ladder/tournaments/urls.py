"""URLs of the tournaments, deals and version-comparison API (under /api/v1/)."""

from django.urls import path

from ladder.tournaments import apis

urlpatterns = [
    path("deals/<id:deal_id>/", apis.DealDetailApi.as_view(), name="deal-detail"),
    path("tournaments/", apis.TournamentListApi.as_view(), name="tournament-list"),
    path(
        "tournaments/<id:tournament_id>/",
        apis.TournamentDetailApi.as_view(),
        name="tournament-detail",
    ),
    path(
        "tournaments/<id:tournament_id>/standings/",
        apis.TournamentStandingsApi.as_view(),
        name="tournament-standings",
    ),
    path(
        "tournaments/<id:tournament_id>/participants/",
        apis.TournamentParticipantsApi.as_view(),
        name="tournament-participants",
    ),
    path("comparisons/", apis.ComparisonListApi.as_view(), name="comparison-list"),
    path(
        "comparisons/<id:comparison_id>/",
        apis.ComparisonDetailApi.as_view(),
        name="comparison-detail",
    ),
]
