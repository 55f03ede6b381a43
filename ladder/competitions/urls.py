"""URLs of the competitions and private-tournaments API (under /api/v1/)."""

from django.urls import path

from ladder.competitions import apis

urlpatterns = [
    path("competitions/", apis.CompetitionListApi.as_view(), name="competition-list"),
    path(
        "competitions/<id:competition_id>/",
        apis.CompetitionDetailApi.as_view(),
        name="competition-detail",
    ),
    path(
        "competitions/<id:competition_id>/entries/",
        apis.CompetitionEntriesApi.as_view(),
        name="competition-entries",
    ),
    path(
        "competitions/<id:competition_id>/entries/<id:bot_id>/",
        apis.CompetitionEntryApi.as_view(),
        name="competition-entry",
    ),
    path(
        "competitions/<id:competition_id>/follow/",
        apis.CompetitionFollowApi.as_view(),
        name="competition-follow",
    ),
    path(
        "competitions/<id:competition_id>/invitations/",
        apis.CompetitionInvitationsApi.as_view(),
        name="competition-invitations",
    ),
    path(
        "competitions/<id:competition_id>/start/",
        apis.PrivateTournamentStartApi.as_view(),
        name="private-tournament-start",
    ),
    path(
        "competition-invitations/<id:invitation_id>/accept/",
        apis.InvitationAcceptApi.as_view(),
        name="competition-invitation-accept",
    ),
    path(
        "private-tournaments/",
        apis.PrivateTournamentListApi.as_view(),
        name="private-tournament-list",
    ),
]
