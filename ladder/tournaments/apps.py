from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    """Tournaments, version comparisons and duplicate deals: models, services, API, admin."""

    name = "ladder.tournaments"
    label = "tournaments"
