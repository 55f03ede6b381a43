"""Admin for users and tokens: tokens are read-only and revocable."""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from ladder.accounts.models import ApiToken, User


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    list_display = ("username", "email", "is_staff", "is_active", "date_joined")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("prefix", "name", "user", "created_at", "last_used_at", "revoked_at")
    list_filter = (("revoked_at", admin.EmptyFieldListFilter), "created_at")
    search_fields = ("prefix", "name", "user__username")
    readonly_fields = ("user", "prefix", "created_at", "last_used_at", "revoked_at")
    exclude = ("digest",)
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Secrets are shown once by the API; an admin form could not show them.
        return False

    @admin.action(description="Revoke selected tokens")
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiToken]) -> None:
        n = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"{n} token(s) revoked", messages.SUCCESS)
