"""The notifications pages: what I am told and where, and the one-click unsubscribe.

The settings page posts one form (the webhook URL and a checkbox per kind and
channel) to ``ladder.notifications.services``; a first webhook URL's secret is
in that one response only, as a new API token's is. The unsubscribe page needs
no sign-in: the signed token in its URL is the authority. Its GET only shows a
button (mail scanners that fetch every link must not unsubscribe anyone); a
POST unsubscribes, whether from that button or from a mail client's own
one-click button (RFC 8058: ``List-Unsubscribe=One-Click``, no cookies, hence
no CSRF token; the signed token stands in for it).
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods, require_POST

from ladder.accounts.models import User
from ladder.accounts.requests import request_user
from ladder.common.exceptions import NotFound
from ladder.notifications import selectors, services
from ladder.notifications.kinds import Channel, Kind, kind_label
from ladder.notifications.models import WEBHOOK_URL_MAX
from ladder.notifications.signing import unsubscribe_token_read
from ladder.web.errors import shown_on

DELIVERIES_SHOWN = 20


class NotificationForm(forms.Form):
    """The webhook URL and, per kind, a box for e-mail and one for the webhook."""

    webhook_url = forms.CharField(
        label="Webhook URL",
        required=False,
        max_length=WEBHOOK_URL_MAX,
        help_text="https://… of a receiver of yours; empty: no webhook.",
    )

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        for kind in Kind.values:
            for channel in Channel.values:
                self.fields[f"{kind}__{channel}"] = forms.BooleanField(
                    required=False, label=f"{kind_label(kind)} by {channel}"
                )

    def choices(self) -> dict[str, dict[str, bool]]:
        return {
            kind: {c: bool(self.cleaned_data.get(f"{kind}__{c}")) for c in Channel.values}
            for kind in Kind.values
        }


def _rows(form: NotificationForm) -> list[dict[str, object]]:
    """One table row per kind with its two boxes, for the template."""
    return [
        {
            "kind": kind,
            "label": kind_label(kind),
            "email": form[f"{kind}__{Channel.EMAIL}"],
            "webhook": form[f"{kind}__{Channel.WEBHOOK}"],
        }
        for kind in Kind.values
    ]


def _initial(user: User) -> dict[str, object]:
    """The form's values from what is stored (or the defaults)."""
    webhook = selectors.webhook_of(user_id=user.pk)
    initial: dict[str, object] = {"webhook_url": webhook.url if webhook else ""}
    for choice in selectors.choices_of(user=user):
        initial[f"{choice.kind}__{Channel.EMAIL}"] = choice.email
        initial[f"{choice.kind}__{Channel.WEBHOOK}"] = choice.webhook
    return initial


def _page(
    request: HttpRequest, user: User, form: NotificationForm, secret: str | None
) -> HttpResponse:
    context = {
        "nav": "notifications",
        "form": form,
        "rows": _rows(form),
        "secret": secret,
        "webhook": selectors.webhook_of(user_id=user.pk),
        "deliveries": selectors.deliveries_of(user=user)[:DELIVERIES_SHOWN],
    }
    return render(request, "web/notifications.html", context, status=400 if form.errors else 200)


@login_required
@never_cache
def notifications(request: HttpRequest) -> HttpResponse:
    user = request_user(request)
    form = NotificationForm(request.POST or None, initial=_initial(user))
    secret = None
    if request.method == "POST" and form.is_valid():
        with shown_on(form):
            secret = services.webhook_set(user=user, url=form.cleaned_data["webhook_url"]).secret
            services.choices_set(user=user, choices=form.choices())
        if not form.errors and secret is None:
            messages.success(request, "Saved: you are told what you chose.")
            return redirect("web:notifications")
    return _page(request, user, form, secret)


@login_required
@never_cache
@require_POST
def webhook_secret(request: HttpRequest) -> HttpResponse:
    """A new signing secret, shown in this one response."""
    user = request_user(request)
    try:
        secret = services.webhook_secret_rotate(user=user)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    return _page(request, user, NotificationForm(initial=_initial(user)), secret)


@csrf_exempt  # the signed token is the authority; mail clients post without cookies
@never_cache
@require_http_methods(["GET", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    read = unsubscribe_token_read(token)
    if read is None or read.kind not in Kind.values or read.channel not in Channel.values:
        raise Http404("this unsubscribe link is not valid (copied in part?)")
    context: dict[str, object] = {
        "token": token,
        "kind": kind_label(read.kind),
        "channel": Channel(read.channel).label,
        "done": None,
    }
    if request.method == "POST":
        everything = request.POST.get("scope") == "all"
        try:
            context["done"] = services.unsubscribe(token=token, everything=everything)
        except NotFound as exc:
            raise Http404(exc.message) from exc
        context["everything"] = everything
    return render(request, "web/unsubscribe.html", context)
