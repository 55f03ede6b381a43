"""Admin for bots and versions, with moderation actions that call the services."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ladder.accounts.requests import request_user
from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_suspend, bot_unsuspend
from ladder.common.elo import points
from ladder.common.exceptions import ApplicationError
from ladder.ratings.models import BotRating


class BotVersionInline(admin.TabularInline):
    model = BotVersion
    extra = 0
    can_delete = False
    fields = (
        "number",
        "archive",
        "archive_sha256",
        "archive_size",
        "entry_point",
        "endpoint",
        "status",
        "smoke_outcome",
        "created_at",
    )
    readonly_fields = fields
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


class BotRatingInline(admin.TabularInline):
    """Ratings change only through recorded results and ``rerate``."""

    model = BotRating
    extra = 0
    can_delete = False
    fields = ("ladder", "rating_points", "games", "wins")
    readonly_fields = fields

    @admin.display(description="rating")
    def rating_points(self, obj: BotRating) -> str:
        return f"{points(obj.rating):.2f}"

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Bot)
class BotAdmin(admin.ModelAdmin):
    list_display = (
        "name", "owner", "kind", "is_active", "suspension", "retired_at", "created_at",
    )  # fmt: skip
    list_filter = (
        "kind", "is_active", "suspension", ("retired_at", admin.EmptyFieldListFilter),
        "created_at",
    )  # fmt: skip
    search_fields = ("name", "owner__username", "suspended_reason")
    # Suspensions change through the actions below (and auto-suspend), which keep who
    # suspended the bot, so that only staff lift a staff suspension.
    readonly_fields = (
        "current_version", "created_at", "updated_at", "retired_at", "suspension",
        "suspended_at", "failures_since",
    )  # fmt: skip
    inlines = [BotRatingInline, BotVersionInline]
    actions = ["suspend", "unsuspend"]

    @admin.action(description="Suspend selected bots (reason: moderation)")
    def suspend(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        user = request_user(request)
        for bot in queryset:
            bot_suspend(user=user, bot_id=bot.pk, reason=f"suspended by {user}")
        self.message_user(request, f"{queryset.count()} bot(s) suspended", messages.SUCCESS)

    @admin.action(description="Unsuspend selected bots")
    def unsuspend(self, request: HttpRequest, queryset: QuerySet[Bot]) -> None:
        for bot in queryset:
            try:
                bot_unsuspend(user=request_user(request), bot_id=bot.pk)
            except ApplicationError as exc:
                self.message_user(request, f"{bot}: {exc.message}", messages.WARNING)


@admin.register(BotVersion)
class BotVersionAdmin(admin.ModelAdmin):
    list_display = ("bot", "number", "status", "archive_size", "endpoint", "created_at")
    list_filter = ("status", "bot__kind", "created_at")
    search_fields = ("bot__name", "archive_sha256", "endpoint")
    readonly_fields = [f.name for f in BotVersion._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Versions come only through validated uploads.
        return False
