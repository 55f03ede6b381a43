"""Admin: staff announce and follow competitions (*Competitions > Add*).

A new competition is checked as the REST and gRPC ones are
(``services.competition_create``'s checks) and opens for entry at its time (beat);
once entry has opened its final's fields are read-only.
"""

from __future__ import annotations

import copy
from typing import Any

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.http import HttpRequest

from ladder.common.exceptions import ApplicationError
from ladder.competitions import services
from ladder.competitions.models import Competition, CompetitionEntry, CompetitionInvitation

FINAL_FIELDS = (
    "ladder",
    "format",
    "seats",
    "confidence",
    "min_deals",
    "max_games",
    "matchup_max_deals",
    "group_max_deals",
    "top",
    "advance",
    "first_stage",
    "finalists",
    "final_size",
)


class EntryInline(admin.TabularInline):
    model = CompetitionEntry
    extra = 0
    fields = ("bot", "owner", "version", "seed", "finalist", "place", "place_low", "place_high")
    readonly_fields = fields
    can_delete = False


class InvitationInline(admin.TabularInline):
    model = CompetitionInvitation
    extra = 0
    fields = ("user", "bot", "accepted_at")
    readonly_fields = ("accepted_at",)


class CompetitionForm(forms.ModelForm):
    """The admin's form: the services' checks on what would be saved."""

    class Meta:
        model = Competition
        fields = "__all__"

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        candidate = copy.copy(self.instance)
        for field, value in data.items():
            if hasattr(candidate, field) and not isinstance(value, list):
                setattr(candidate, field, value)
        try:
            services.competition_check(candidate)
        except ApplicationError as exc:
            raise ValidationError(exc.message) from exc
        return data


@admin.register(Competition)
class CompetitionAdmin(admin.ModelAdmin):
    form = CompetitionForm
    list_display = ("name", "phase", "format", "entry_opens_at", "freeze_at", "final_starts_at")
    list_filter = ("phase", "private", "format")
    search_fields = ("name",)
    inlines = [InvitationInline, EntryInline]
    fields = (
        "name",
        "rules",
        "entry",
        "entry_opens_at",
        "freeze_at",
        "final_starts_at",
        "entries_per_user",
        *FINAL_FIELDS,
        "phase",
        "games",
    )

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        base = ("phase", "games")
        if obj is not None and obj.phase != Competition.Phase.ANNOUNCED:
            return (*base, *FINAL_FIELDS, "entry_opens_at", "freeze_at", "final_starts_at")
        return base

    def save_model(self, request: HttpRequest, obj: Competition, form: Any, change: bool) -> None:
        try:
            services.competition_check(obj)
        except ApplicationError as exc:
            raise ValidationError(exc.message) from exc
        if not change:
            obj.created_by = request.user  # type: ignore[assignment]
        super().save_model(request, obj, form, change)
        services.competitions_tick()  # an entry time already passed opens it now
