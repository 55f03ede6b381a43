"""URL map of the site (server-rendered pages); the REST API lives under /api/."""

from django.urls import path

from ladder.web import auth, comparisons, competitions, live, notifications, owner, pages

app_name = "web"

urlpatterns = [
    path("", pages.leaderboard, name="leaderboard"),
    path("bots/<id:bot_id>/", pages.bot_detail, name="bot"),
    path("matches/<id:match_id>/", pages.match_detail, name="match"),
    path("tournaments/", pages.tournament_list, name="tournaments"),
    path("tournaments/<id:tournament_id>/", pages.tournament_detail, name="tournament"),
    path("competitions/", competitions.competition_list, name="competitions"),
    path(
        "competitions/<id:competition_id>/",
        competitions.competition_detail,
        name="competition",
    ),
    path(
        "competitions/<id:competition_id>/enter/",
        competitions.competition_enter,
        name="competition-enter",
    ),
    path(
        "competitions/<id:competition_id>/follow/",
        competitions.competition_follow,
        name="competition-follow",
    ),
    path("now/", pages.now, name="now"),
    path("accounts/login/", auth.SignInView.as_view(), name="login"),
    path("accounts/signup/", auth.signup, name="signup"),
    path("accounts/logout/", auth.SignOutView.as_view(), name="logout"),
    path("me/", owner.dashboard, name="dashboard"),
    path("me/bots/new/", owner.bot_new, name="bot-new"),
    path("me/bots/<id:bot_id>/", owner.bot_manage, name="bot-manage"),
    path("me/bots/<id:bot_id>/upload/", owner.bot_upload, name="bot-upload"),
    path("me/bots/<id:bot_id>/endpoint/", owner.bot_endpoint, name="bot-endpoint"),
    path("me/bots/<id:bot_id>/challenge/", owner.bot_challenge, name="bot-challenge"),
    path("me/bots/<id:bot_id>/reactivate/", owner.bot_reactivate, name="bot-reactivate"),
    path("me/bots/<id:bot_id>/compare/", comparisons.comparison_start, name="comparison-start"),
    path("me/comparisons/<id:comparison_id>/", comparisons.comparison_page, name="comparison"),
    path("live/pulse.json", live.pulse, name="live-pulse"),
    path("me/tokens/", owner.tokens, name="tokens"),
    path("me/tokens/<id:token_id>/revoke/", owner.token_revoke, name="token-revoke"),
    path("me/notifications/", notifications.notifications, name="notifications"),
    path("me/notifications/secret/", notifications.webhook_secret, name="notifications-secret"),
    path("unsubscribe/<str:token>/", notifications.unsubscribe, name="unsubscribe"),
]
