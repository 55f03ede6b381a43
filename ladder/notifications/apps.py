from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "ladder.notifications"
    label = "notifications"
    verbose_name = "Notifications"
