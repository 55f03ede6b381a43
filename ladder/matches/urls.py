"""URLs of the matches API (under /api/v1/)."""

from django.urls import path

from ladder.matches import apis

urlpatterns = [
    path("matches/", apis.MatchListApi.as_view(), name="match-list"),
    path("matches/<id:match_id>/", apis.MatchDetailApi.as_view(), name="match-detail"),
    path("matches/<id:match_id>/cancel/", apis.MatchCancelApi.as_view(), name="match-cancel"),
    path("matches/<id:match_id>/replay/", apis.MatchReplayApi.as_view(), name="match-replay"),
    path(
        "matches/<id:match_id>/seats/<id:seat>/log/",
        apis.SeatLogApi.as_view(),
        name="match-seat-log",
    ),
]
