"""Sign in and out with Django's auth and a session (CSRF-protected forms).

Failed sign-ins are limited per client address and per account by the
authentication backend (``ladder.accounts.backends.LimitedModelBackend``), so
this view needs no limiter of its own: it only says how long to wait when the
limit refused the attempt, instead of the usual "wrong username or password".
"""

from __future__ import annotations

from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView, LogoutView
from django.http import HttpResponse

from ladder.accounts import auth_limits


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
