"""URLs of the matches and tournaments API (under /api/v1/)."""

from django.urls import path

from ladder.matches import apis

urlpatterns = [
    path("matches/", apis.MatchListApi.as_view(), name="match-list"),
    path("matches/<int:match_id>/", apis.MatchDetailApi.as_view(), name="match-detail"),
    path("matches/<int:match_id>/cancel/", apis.MatchCancelApi.as_view(), name="match-cancel"),
    path("matches/<int:match_id>/replay/", apis.MatchReplayApi.as_view(), name="match-replay"),
    path(
        "matches/<int:match_id>/seats/<int:seat>/log/",
        apis.SeatLogApi.as_view(),
        name="match-seat-log",
    ),
    path("deals/<int:deal_id>/", apis.DealDetailApi.as_view(), name="deal-detail"),
    path("tournaments/", apis.TournamentListApi.as_view(), name="tournament-list"),
    path(
        "tournaments/<int:tournament_id>/",
        apis.TournamentDetailApi.as_view(),
        name="tournament-detail",
    ),
    path(
        "tournaments/<int:tournament_id>/standings/",
        apis.TournamentStandingsApi.as_view(),
        name="tournament-standings",
    ),
    path(
        "tournaments/<int:tournament_id>/participants/",
        apis.TournamentParticipantsApi.as_view(),
        name="tournament-participants",
    ),
]
