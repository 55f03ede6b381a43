"""URL map of the REST API v1: each app's ``urls.py``."""

from django.urls import include, path

urlpatterns = [
    path("", include("ladder.accounts.urls")),
    path("", include("ladder.bots.urls")),
    path("", include("ladder.matches.urls")),
    path("", include("ladder.ratings.urls")),
    path("", include("ladder.tournaments.urls")),
    path("", include("ladder.notifications.urls")),
    path("", include("ladder.competitions.urls")),
]
