"""Admin for matches, their seats and results; cancelling goes through the services."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ladder.accounts.requests import request_user
from ladder.common.exceptions import ApplicationError
from ladder.matches.claims import match_cancel
from ladder.matches.models import Match, MatchResult, MatchSeat
from ladder.matches.selectors import match_reveal


class MatchSeatInline(admin.TabularInline):
    model = MatchSeat
    extra = 0
    can_delete = False
    fields = ("seat", "bot", "version", "rank", "score", "faults", "ended", "forfeit_reason",
              "rating_before", "rating_after")  # fmt: skip
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "status",
        "difficulty",
        "rated",
        "tournament",
        "attempts",
        "created_at",
        "finished_at",
    )
    list_filter = ("status", "difficulty", "rated", "tournament", "created_at")
    search_fields = ("=id", "seats__bot__name", "claimed_by", "error")
    # The seed and the replay are shown as everyone sees them (``match_reveal``): hidden
    # until the match's deal is done, staff included (staff own bots too).
    exclude = ("seed", "replay", "replay_sha256", "replay_size")
    readonly_fields = (
        "shown_seed", "shown_replay", "attempts", "claimed_by",
        "lease_expires_at", "started_at", "finished_at", "created_at", "status",
    )  # fmt: skip
    inlines = [MatchSeatInline]

    @admin.display(description="seed")
    def shown_seed(self, match: Match) -> str:
        reveal = match_reveal(match)
        return reveal.hidden if reveal.seed is None else str(reveal.seed)

    @admin.display(description="replay")
    def shown_replay(self, match: Match) -> str:
        reveal = match_reveal(match)
        if reveal.replay is None:
            return reveal.hidden or "none"
        return f"{reveal.replay.name} ({reveal.replay.size} bytes, sha256 {reveal.replay.sha256})"

    actions = ["cancel"]

    @admin.action(description="Cancel selected matches")
    def cancel(self, request: HttpRequest, queryset: QuerySet[Match]) -> None:
        done = 0
        user = request_user(request)
        for match in queryset:
            try:
                match_cancel(match_id=match.pk, user=user, reason=f"cancelled by {user}")
                done += 1
            except ApplicationError as exc:
                self.message_user(request, f"match {match.pk}: {exc.message}", messages.WARNING)
        self.message_user(request, f"{done} match(es) cancelled", messages.SUCCESS)


@admin.register(MatchResult)
class MatchResultAdmin(admin.ModelAdmin):
    list_display = ("id", "match", "reason", "winner", "turns", "elo_k", "recorded_at")
    list_filter = ("reason", "recorded_at")
    search_fields = ("=match__id",)
    readonly_fields = [f.name for f in MatchResult._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(MatchSeat)
class MatchSeatAdmin(admin.ModelAdmin):
    list_display = ("match", "seat", "bot", "rank", "ended", "rating_before", "rating_after")
    list_filter = ("ended",)
    search_fields = ("bot__name", "=match__id")
    readonly_fields = [f.name for f in MatchSeat._meta.fields]
