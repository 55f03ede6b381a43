from django.apps import AppConfig


class MatchmakingConfig(AppConfig):
    """No models: the matchmaker's services and its ``matchmake`` command."""

    name = "ladder.matchmaking"
    label = "matchmaking"
