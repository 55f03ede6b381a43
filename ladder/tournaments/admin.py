"""Admin for tournaments, deals and version comparisons; starting goes through the services."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ladder.accounts.requests import request_user
from ladder.common.exceptions import ApplicationError
from ladder.matches.creation import match_ladder
from ladder.matches.models import Match
from ladder.matches.selectors import match_reveal
from ladder.tournaments.models import Deal, Tournament, VersionComparison
from ladder.tournaments.services import tournament_start


class TournamentForm(forms.ModelForm):
    """The checks ``tournament_create`` makes, for a tournament entered in the admin."""

    class Meta:
        model = Tournament
        fields = [
            "name",
            "format",
            "participants",
            "seats",
            "duplicate",
            "rated",
            "rounds",
            "ladder",
        ]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        swiss = data.get("format") == Tournament.Format.SWISS
        seats = data.get("seats") or 2
        if not 2 <= seats <= 4:
            raise forms.ValidationError("seats must be 2 to 4")
        if swiss and seats != 2:
            raise forms.ValidationError("a Swiss tournament has 2 seats")
        if not swiss and data.get("rounds"):
            raise forms.ValidationError("rounds are for Swiss tournaments")
        participants = data.get("participants")
        if participants is not None and len(participants) < seats:
            raise forms.ValidationError(f"a {seats}-seat tournament needs {seats} participants")
        try:
            match_ladder(
                seats=seats, ladder=data.get("ladder") or None, rated=bool(data.get("rated"))
            )
        except ApplicationError as exc:
            raise forms.ValidationError(exc.message) from exc
        return data


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    """Staff enter a tournament (pending) and start it with the action: the service
    schedules its matches, which are played before ladder matches."""

    form = TournamentForm
    list_display = ("name", "format", "status", "seats", "duplicate", "rated", "created_at")
    list_filter = ("format", "status", "rated")
    search_fields = ("name",)
    filter_horizontal = ("participants",)
    actions = ["start"]

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        times = ("status", "created_by", "started_at", "finished_at")
        if obj is not None and obj.status != Tournament.Status.PENDING:
            return (*TournamentForm.Meta.fields, *times)  # its schedule is made
        return times

    @admin.action(description="Start selected tournaments (schedule their matches)")
    def start(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        user = request_user(request)
        for tournament in queryset:
            try:
                tournament_start(tournament_id=tournament.pk, user=user)
            except ApplicationError as exc:
                self.message_user(request, f"{tournament}: {exc.message}", messages.WARNING)
            else:
                self.message_user(request, f"{tournament} started", messages.SUCCESS)


@admin.register(Deal)
class DealAdmin(admin.ModelAdmin):
    list_display = ("id", "seats", "tournament", "comparison", "comparison_side", "created_at")
    # Its seed is its matches' seed: shown as they show it (``match_reveal``).
    readonly_fields = [*(f.name for f in Deal._meta.fields if f.name != "seed"), "shown_seed"]
    exclude = ("seed",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="seed")
    def shown_seed(self, deal: Deal) -> str:
        reveals = [match_reveal(m) for m in Match.objects.filter(deal=deal)]
        hidden = next((r.hidden for r in reveals if r.seed is None), "")
        return hidden or str(deal.seed)


@admin.register(VersionComparison)
class VersionComparisonAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "bot",
        "old_version",
        "new_version",
        "deals",
        "requested_by",
        "created_at",
    )
    search_fields = ("bot__name",)
    readonly_fields = [f.name for f in VersionComparison._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
