"""URLs of the notifications API (under /api/v1/)."""

from django.urls import path

from ladder.notifications import apis

urlpatterns = [
    path(
        "notifications/settings/",
        apis.NotificationSettingsApi.as_view(),
        name="notification-settings",
    ),
    path(
        "notifications/webhook/secret/",
        apis.WebhookSecretApi.as_view(),
        name="notification-webhook-secret",
    ),
    path(
        "notifications/deliveries/",
        apis.DeliveryListApi.as_view(),
        name="notification-deliveries",
    ),
]
