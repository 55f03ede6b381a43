from django.apps import AppConfig


class ViewerConfig(AppConfig):
    name = "ladder.viewer"
    label = "viewer"
    verbose_name = "replay viewer"
