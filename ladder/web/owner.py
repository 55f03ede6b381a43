"""The owner's dashboard: my bots, create one, upload, endpoint, challenge, API tokens.

Every write goes through the services (``ladder.*.services``), which also decide
who may do what: a view only turns their refusals into page answers
(``errors.shown_on``). Forms post with Django's CSRF token and redirect after
success, except the token page, which must show a new secret exactly once.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from ladder.accounts import selectors as account_selectors
from ladder.accounts import services as account_services
from ladder.accounts.requests import request_user
from ladder.bots import presence
from ladder.bots import selectors as bot_selectors
from ladder.bots import services as bot_services
from ladder.bots.models import Bot
from ladder.common.exceptions import ApplicationError, NotFound
from ladder.ladders import ladder_default
from ladder.matches import bot_selectors as bot_match_selectors
from ladder.matches.challenges import challenge_create
from ladder.tournaments import selectors as comparison_selectors
from ladder.web.comparison_form import comparison_form
from ladder.web.errors import shown_on
from ladder.web.forms import (
    BotCreateForm,
    ChallengeForm,
    EndpointForm,
    TokenCreateForm,
    UploadForm,
)
from ladder.web.pages import LOG_SHOWN_BYTES, MATCHES_PER_PAGE, VERSIONS_SHOWN, CountedPaginator
from ladder.web.rows import board_lines, version_rows

UPLOAD_SLACK_BYTES = 64 * 1024  # multipart framing around the file itself


@login_required
def dashboard(request: HttpRequest) -> HttpResponse:
    bots = list(bot_selectors.bot_list(owner=request_user(request), with_current_version=True))
    newest = bot_selectors.bot_newest_versions(bot_ids=[b.pk for b in bots])
    rows = [(line, newest.get(line.bot.pk)) for line in board_lines(bots)]
    context = {
        "nav": "dashboard",
        "rows": rows,
        "ladder": ladder_default(),
        "form": BotCreateForm(),
        "has_token": account_selectors.token_list(user=request_user(request))
        .filter(revoked_at__isnull=True)
        .exists(),
    }
    return render(request, "web/dashboard.html", context)


@login_required
def bot_new(request: HttpRequest) -> HttpResponse:
    form = BotCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        d = form.cleaned_data
        with shown_on(form):
            bot = bot_services.bot_create(
                owner=request_user(request),
                name=d["name"],
                kind=d["kind"],
                description=d["description"],
                endpoint=d["endpoint"] or None,
            )
            messages.success(request, f"Bot {bot.name} created.")
            return redirect("web:bot-manage", bot_id=bot.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "web/bot_new.html", {"form": form}, status=status)


def _own_bot(request: HttpRequest, bot_id: int) -> Bot:
    """The signed-in user's bot: 404 when missing, 403 when someone else's."""
    try:
        bot = bot_selectors.bot_get(bot_id=bot_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    if bot.owner_id != request.user.pk:
        raise DjangoPermissionDenied("only the owner can manage this bot")
    return bot


def _manage_page(request: HttpRequest, bot: Bot, status: int = 200, **forms: Any) -> HttpResponse:
    matches = CountedPaginator(
        bot_match_selectors.BotMatchLines(bot.pk),
        MATCHES_PER_PAGE,
        count=bot_match_selectors.bot_match_count(bot_id=bot.pk),
    )
    context = {
        "bot": bot,
        "line": board_lines([bot])[0],  # on the default ladder
        "ladder": ladder_default(),
        "versions": version_rows(
            bot_selectors.bot_versions(bot=bot)[:VERSIONS_SHOWN], private=True, cap=LOG_SHOWN_BYTES
        ),
        "matches": matches.get_page(request.GET.get("page")),
        "upload_form": forms.get("upload_form") or UploadForm(),
        "endpoint_form": forms.get("endpoint_form") or EndpointForm(),
        "challenge_form": forms.get("challenge_form") or ChallengeForm(),
        "comparison_form": forms.get("comparison_form") or comparison_form(bot),
        "comparisons": comparison_selectors.comparison_list(user=request_user(request)).filter(
            bot=bot
        )[:10],
        "report": forms.get("report"),
        "streams": presence.streams_shown(bot.pk) if bot.kind == Bot.Kind.CONNECTED else None,
    }
    return render(request, "web/bot_manage.html", context, status=status)


@login_required
def bot_manage(request: HttpRequest, bot_id: int) -> HttpResponse:
    return _manage_page(request, _own_bot(request, bot_id))


@login_required
@require_POST
def bot_upload(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = _own_bot(request, bot_id)
    limit = settings.LADDER_UPLOAD_MAX_BYTES
    declared = request.META.get("CONTENT_LENGTH") or "0"
    if declared.isdigit() and int(declared) > limit + UPLOAD_SLACK_BYTES:
        # Refused before the multipart parser spools the body to disk.
        return _manage_page(request, bot, 413, report=f"uploads are limited to {limit} bytes")
    form = UploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _manage_page(request, bot, 400, upload_form=form)
    upload = form.cleaned_data["file"]
    with shown_on(form):
        try:
            version = bot_services.bot_version_upload(
                user=request_user(request),
                bot_id=bot.pk,
                filename=upload.name or "upload",
                data=upload.read(limit + 1),  # one byte past the limit: the report says so
                entry_point=form.cleaned_data["entry_point"] or None,
            )
        except bot_services.UploadRejected as exc:
            form.add_error(None, exc.message)
            return _manage_page(request, bot, 400, upload_form=form, report=exc.report.as_text())
        messages.success(
            request,
            f"Version {version.number} uploaded: pending until its smoke match, which the"
            " workers play on their own; this page shows its outcome.",
        )
        return redirect("web:bot-manage", bot_id=bot.pk)
    return _manage_page(request, bot, 400, upload_form=form)


@login_required
@require_POST
def bot_endpoint(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = _own_bot(request, bot_id)
    form = EndpointForm(request.POST)
    if form.is_valid():
        with shown_on(form):
            version = bot_services.bot_set_endpoint(
                user=request_user(request), bot_id=bot.pk, endpoint=form.cleaned_data["endpoint"]
            )
            messages.success(request, f"Endpoint set: version {version.number}.")
            return redirect("web:bot-manage", bot_id=bot.pk)
    return _manage_page(request, bot, 400, endpoint_form=form)


@login_required
@require_POST
def bot_reactivate(request: HttpRequest, bot_id: int) -> HttpResponse:
    """The owner lifts an automatic suspension (a staff one stays: the service refuses)."""
    bot = _own_bot(request, bot_id)
    try:
        bot_services.bot_unsuspend(user=request_user(request), bot_id=bot.pk)
    except ApplicationError as exc:
        messages.error(request, exc.message)
    else:
        messages.success(request, f"{bot.name} is active again: the matchmaker seats it.")
    return redirect("web:bot-manage", bot_id=bot.pk)


@login_required
@require_POST
def bot_challenge(request: HttpRequest, bot_id: int) -> HttpResponse:
    bot = _own_bot(request, bot_id)
    form = ChallengeForm(request.POST)
    if form.is_valid():
        try:
            names = form.cleaned_data["opponents"]
            opponents = [bot_selectors.bot_get_by_name(name=n) for n in names]
        except NotFound as exc:
            form.add_error("opponents", exc.message)
        else:
            with shown_on(form):
                match = challenge_create(
                    user=request_user(request),
                    bot_ids=[bot.pk, *(o.pk for o in opponents)],
                    ladder=form.cleaned_data["ladder"] or None,
                )
                messages.success(request, f"Challenge queued as match {match.pk}.")
                return redirect("web:match", match_id=match.pk)
    return _manage_page(request, bot, 400, challenge_form=form)


@never_cache
@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    """List and create API tokens; a new token's secret is in this one response only."""
    form = TokenCreateForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        try:
            created = account_services.token_create(
                user=request_user(request), name=form.cleaned_data["name"]
            )
        except ApplicationError as exc:  # the cap on active tokens is the form's business
            form.add_error(None, exc.message)
        else:
            form = TokenCreateForm()
    status = 400 if form.errors else 200
    context = {
        "nav": "tokens",
        "form": form,
        "created": created,
        "tokens": account_selectors.token_list(user=request_user(request)),
    }
    return render(request, "web/tokens.html", context, status=status)


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    try:
        token = account_services.token_revoke(user=request_user(request), token_id=token_id)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    messages.success(request, f"Token {token.prefix}… revoked.")
    return redirect("web:tokens")
