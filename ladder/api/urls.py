"""URL map of the REST API v1."""

from django.urls import path

from ladder.api import hosted_views as hv
from ladder.api import views as v

urlpatterns = [
    path("leaderboard/", v.LeaderboardApi.as_view(), name="leaderboard"),
    path("bots/", v.BotListCreateApi.as_view(), name="bot-list"),
    path("bots/<int:bot_id>/", v.BotDetailApi.as_view(), name="bot-detail"),
    path("bots/<int:bot_id>/versions/", v.BotVersionsApi.as_view(), name="bot-versions"),
    path(
        "bots/<int:bot_id>/versions/<int:number>/smoke/",
        hv.VersionSmokeApi.as_view(),
        name="bot-version-smoke",
    ),
    path("bots/<int:bot_id>/endpoint/", v.BotEndpointApi.as_view(), name="bot-endpoint"),
    path("bots/<int:bot_id>/suspend/", v.BotSuspendApi.as_view(), name="bot-suspend"),
    path("bots/<int:bot_id>/unsuspend/", v.BotUnsuspendApi.as_view(), name="bot-unsuspend"),
    path("matches/", v.MatchListCreateApi.as_view(), name="match-list"),
    path("matches/<int:match_id>/", v.MatchDetailApi.as_view(), name="match-detail"),
    path("matches/<int:match_id>/cancel/", v.MatchCancelApi.as_view(), name="match-cancel"),
    path("matches/<int:match_id>/replay/", v.MatchReplayApi.as_view(), name="match-replay"),
    path(
        "matches/<int:match_id>/seats/<int:seat>/log/",
        hv.SeatLogApi.as_view(),
        name="match-seat-log",
    ),
    path("tokens/", v.TokenListCreateApi.as_view(), name="token-list"),
    path("tokens/<int:token_id>/", v.TokenRevokeApi.as_view(), name="token-revoke"),
    path("tournaments/", v.TournamentListApi.as_view(), name="tournament-list"),
]
