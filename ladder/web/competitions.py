"""Competition pages: the list (linked from the leaderboard and the site's menu) and one
competition: its phases with dates, an entry form while entry is open, the entrants,
the final's live bracket, groups or standings, and the result with each place's
interval, the places still a coin toss and a pairwise table of the top.

Every figure comes from the competition's row (its final's view and result, kept by
the final's steps) and a page of its entries, so the page costs the same whatever
the ladder's history (``ladder.competitions.selectors``).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from ladder.accounts.requests import request_user
from ladder.bots.models import Bot
from ladder.common.exceptions import ApplicationError, NotFound
from ladder.competitions import following, selectors, services
from ladder.competitions.models import Competition
from ladder.web.errors import shown_on

ENTRIES_PER_PAGE = 50


class EnterForm(forms.Form):
    bot = forms.ModelChoiceField(queryset=Bot.objects.none(), label="Bot to enter")

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["bot"].queryset = Bot.objects.filter(  # type: ignore[attr-defined]
            owner=user, retired_at__isnull=True
        ).order_by("name")


def competition_list(request: HttpRequest) -> HttpResponse:
    page = Paginator(selectors.competition_list(), 50).get_page(request.GET.get("page"))
    return render(request, "web/competitions.html", {"nav": "competitions", "page": page})


def _view_rows(competition: Competition, names: dict[int, str]) -> list[dict[str, Any]]:
    """The final's stages with bot names filled in (the view holds ids)."""

    def named(row: dict[str, Any]) -> dict[str, Any]:
        out = dict(row)
        for field in ("a", "b", "bot", "winner", "bye"):
            if out.get(field) is not None:
                out[f"{field}_name"] = names.get(out[field], "?")
        return out

    stages = []
    for stage in competition.final_view or []:
        s = dict(stage)
        if "rounds" in s and s["kind"] != "swiss":
            s["bracket"] = [[named(m) for m in r] for r in s["rounds"]]
        if s.get("kind") == "swiss":
            s["swiss"] = [
                {**r, "pairs": [named(p) for p in r["pairs"]], **named({"bye": r.get("bye")})}
                for r in s.get("rounds", [])
            ]
        if "standings" in s:
            s["standings"] = [named(r) for r in s["standings"]]
        if "groups" in s:
            s["groups"] = [
                {**g, "standings": [named(r) for r in g.get("standings", [])]} for g in s["groups"]
            ]
        stages.append(s)
    return stages


def competition_detail(request: HttpRequest, competition_id: int, form: Any = None) -> HttpResponse:
    try:
        competition = selectors.competition_get(competition_id=competition_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    entries = Paginator(selectors.competition_entries(competition=competition), ENTRIES_PER_PAGE)
    user = request.user
    can_enter = (
        user.is_authenticated
        and not competition.private
        and competition.phase == Competition.Phase.ENTRY
    )
    if can_enter and form is None:
        form = EnterForm(user=user)
    names = selectors.bot_names(competition)
    context = {
        "nav": "competitions",
        "competition": competition,
        "phases": selectors.competition_phases(competition),
        "entries": entries.get_page(request.GET.get("page")),
        "stages": _view_rows(competition, names),
        "result": selectors.result_rows(competition, names),
        "form": form if can_enter else None,
        # Signed in, a public competition not finished: a button to follow or stop.
        "can_follow": (
            user.is_authenticated
            and not competition.private
            and competition.phase != Competition.Phase.FINISHED
        ),
        "following": following.competition_followed(
            user=request_user(request), competition_id=competition.pk
        )
        if user.is_authenticated
        else False,
    }
    return render(
        request, "web/competition.html", context, status=400 if form and form.errors else 200
    )


@require_POST
@login_required
def competition_enter(request: HttpRequest, competition_id: int) -> HttpResponse:
    form = EnterForm(request.POST, user=request.user)
    if form.is_valid():
        with shown_on(form):
            entry = services.competition_enter(
                user=request_user(request),
                competition_id=competition_id,
                bot_id=form.cleaned_data["bot"].pk,
            )
            messages.success(request, f"{entry.bot.name} is entered.")
            return redirect("web:competition", competition_id=competition_id)
    return competition_detail(request, competition_id, form=form)


@require_POST
@login_required
def competition_follow(request: HttpRequest, competition_id: int) -> HttpResponse:
    """Follow the competition (``follow=1``) or stop following it (``follow=0``)."""
    user = request_user(request)
    try:
        if request.POST.get("follow") == "0":
            following.competition_unfollow(user=user, competition_id=competition_id)
            messages.success(request, "You no longer follow this competition.")
        else:
            following.competition_follow(user=user, competition_id=competition_id)
            messages.success(
                request,
                "You follow this competition: you are told of its phases and its result "
                "(by the channels of your notification settings).",
            )
    except NotFound as exc:
        raise Http404(exc.message) from exc
    except ApplicationError as exc:
        messages.error(request, exc.message)
    return redirect("web:competition", competition_id=competition_id)
