"""URLs of the bots API (under /api/v1/)."""

from django.urls import path

from ladder.bots import apis

urlpatterns = [
    path("bots/", apis.BotListApi.as_view(), name="bot-list"),
    path("bots/<id:bot_id>/", apis.BotDetailApi.as_view(), name="bot-detail"),
    path("bots/<id:bot_id>/versions/", apis.BotVersionsApi.as_view(), name="bot-versions"),
    path(
        "bots/<id:bot_id>/versions/<id:number>/smoke/",
        apis.VersionSmokeApi.as_view(),
        name="bot-version-smoke",
    ),
    path("bots/<id:bot_id>/endpoint/", apis.BotEndpointApi.as_view(), name="bot-endpoint"),
    path("bots/<id:bot_id>/suspend/", apis.BotSuspendApi.as_view(), name="bot-suspend"),
    path("bots/<id:bot_id>/unsuspend/", apis.BotUnsuspendApi.as_view(), name="bot-unsuspend"),
]
