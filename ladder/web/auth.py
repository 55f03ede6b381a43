"""Sign up, in and out with Django's auth and a session (CSRF-protected forms).

Sign-up (``LADDER_SIGNUP``, on by default; off for a private ladder) uses Django's
user-creation form and password validators and is limited per client address
(``LADDER_SIGNUPS_PER_ADDRESS`` new accounts per window), so one address cannot
mint accounts in bulk to get around the per-owner rules of matchmaking.

Failed sign-ins are limited per client address and per account by the
authentication backend (``ladder.accounts.backends.LimitedModelBackend``), so
this view needs no limiter of its own: it only says how long to wait when the
limit refused the attempt, instead of the usual "wrong username or password".
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView, LogoutView
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache

from ladder.accounts import auth_limits
from ladder.accounts import services as account_services
from ladder.accounts.counters import WindowLimit
from ladder.web.errors import shown_on
from ladder.web.forms import SignUpForm


class SignInView(LoginView):
    """Username and password; an already signed-in user goes straight on."""

    template_name = "web/login.html"
    redirect_authenticated_user = True

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        wait = auth_limits.retry_after(
            address=auth_limits.request_address(self.request),
            username=form.data.get("username") or None,
        )
        if not wait:
            return super().form_invalid(form)
        form.errors.clear()
        form.add_error(None, f"Too many failed sign-ins: try again in {wait} s.")
        return self.render_to_response(self.get_context_data(form=form), status=429)


class SignOutView(LogoutView):
    """POST only (Django's own rule): a link cannot sign anyone out."""


def _signup_limit() -> WindowLimit | None:
    return WindowLimit.from_rate("signup-address", settings.LADDER_SIGNUPS_PER_ADDRESS)


@never_cache
def signup(request: HttpRequest) -> HttpResponse:
    """A new account, signed in at once; then the dashboard (first bot, first token)."""
    if not settings.LADDER_SIGNUP:
        raise Http404("sign-up is off on this ladder: ask its operator for an account")
    if request.user.is_authenticated:
        return redirect("web:dashboard")
    form = SignUpForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if not form.is_valid():
            return render(request, "web/signup.html", {"form": form}, status=400)
        # The address's unit is taken before the account is made (atomically, in the
        # database every process shares): counting first and making the account after
        # let ten sign-ups at one instant through a limit of five.
        limit = _signup_limit()
        address = auth_limits.request_address(request)
        taken = limit.take(address) if limit else None
        if limit and taken and not taken.ok:
            form.add_error(
                None, f"Too many new accounts from here: try again in {taken.retry_after} s."
            )
            return render(request, "web/signup.html", {"form": form}, status=429)
        d = form.cleaned_data
        with shown_on(form):
            try:
                user = account_services.user_signup(
                    username=d["username"], password=d["password1"], email=d.get("email") or ""
                )
            except BaseException:
                if limit and taken:
                    limit.give_back(address, taken)
                raise
            login(request, user, backend=settings.AUTHENTICATION_BACKENDS[0])
            messages.success(
                request,
                f"Welcome, {user.username}. Create a bot below, and an API token for "
                "your programs.",
            )
            return redirect("web:dashboard")
        status = 400
    return render(request, "web/signup.html", {"form": form}, status=status)
