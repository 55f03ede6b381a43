"""The viewer's URLs: pages under /replays/, timeline endpoints under /api/v1/."""

from django.urls import path

from ladder.viewer import views

urlpatterns = [
    path("replays/", views.standalone_page, name="viewer-standalone"),
    path("replays/matches/<id:match_id>/", views.match_page, name="viewer-match"),
    path("replays/matches/<id:match_id>/live/", views.live_page, name="viewer-live"),
    path("api/v1/matches/<id:match_id>/live/", views.live_json, name="viewer-live-json"),
    path(
        "api/v1/matches/<id:match_id>/timeline/",
        views.MatchTimelineApi.as_view(),
        name="viewer-match-timeline",
    ),
    path(
        "api/v1/replays/timeline/",
        views.ReplayTimelineApi.as_view(),
        name="viewer-replay-timeline",
    ),
]
