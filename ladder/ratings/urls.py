"""URLs of the ratings API (under /api/v1/)."""

from django.urls import path

from ladder.ratings import apis

urlpatterns = [
    path("ladders/", apis.LadderListApi.as_view(), name="ladder-list"),
    path("leaderboard/", apis.LeaderboardApi.as_view(), name="leaderboard"),
    path(
        "bots/<id:bot_id>/rating-history/",
        apis.BotRatingHistoryApi.as_view(),
        name="bot-rating-history",
    ),
    path("bots/<id:bot_id>/lineage/", apis.BotLineageApi.as_view(), name="bot-lineage"),
    path("seasons/", apis.SeasonListApi.as_view(), name="season-list"),
    path("exports/games/", apis.GamesExportApi.as_view(), name="games-export"),
    path("seasons/start/", apis.SeasonStartApi.as_view(), name="season-start"),
    path(
        "seasons/<id:number>/standings/",
        apis.SeasonStandingsApi.as_view(),
        name="season-standings",
    ),
]
