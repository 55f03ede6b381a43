"""Admin for notifications: every delivery with its state and last error (read-only), and
users' webhooks (their secrets never shown)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from ladder.notifications.models import Delivery, Webhook


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = ("id", "user", "kind", "channel", "status", "attempts", "created_at", "sent_at")
    list_filter = ("status", "kind", "channel")
    search_fields = ("user__username", "key", "subject")
    readonly_fields = [f.name for f in Delivery._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # owed by the ladder's events, never by hand

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Webhook)
class WebhookAdmin(admin.ModelAdmin):
    list_display = ("user", "url", "updated_at")
    search_fields = ("user__username", "url")
    readonly_fields = ("user", "url", "created_at", "updated_at")
    exclude = ("secret",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # the secret is shown to its owner once, by the site or the API
