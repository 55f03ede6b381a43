from django.apps import AppConfig


class CompetitionsConfig(AppConfig):
    """Competitions people enter (entry, qualification on the ladder, a freeze, a final
    that settles the order) and private tournaments among friends' bots."""

    name = "ladder.competitions"
    label = "competitions"
