"""Sign in and out with Django's auth and a session (CSRF-protected forms).

The failed-login limiter of the security issue plugs in at ``SignInView``: it
is Django's ``LoginView`` so the limiter can wrap ``post`` (count and refuse
before the password is checked) and ``form_invalid`` (count a failure) without
touching the templates or URLs.
"""

from __future__ import annotations

from django.contrib.auth.views import LoginView, LogoutView


class SignInView(LoginView):
    """Username and password; an already signed-in user goes straight on."""

    template_name = "web/login.html"
    redirect_authenticated_user = True


class SignOutView(LogoutView):
    """POST only (Django's own rule): a link cannot sign anyone out."""
