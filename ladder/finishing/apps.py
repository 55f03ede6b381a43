from django.apps import AppConfig


class FinishingConfig(AppConfig):
    """No models: what happens when a match ends (``match_finish``), auto-suspend and the
    janitor that finishes what a lost worker left."""

    name = "ladder.finishing"
    label = "finishing"
