"""Absolute links for messages read outside the site (e-mail, a webhook's receiver).

A message has no request to take the host from, so the site's public address
is a setting, ``LADDER_SITE_URL``.
"""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse

from ladder.notifications.signing import unsubscribe_token


def absolute(path: str) -> str:
    """``path`` (starting with /) on the site's public address."""
    return settings.LADDER_SITE_URL.rstrip("/") + path


def site_link(viewname: str, *args: object, fragment: str = "") -> str:
    """The absolute URL of a named page, with an optional #fragment."""
    url = absolute(reverse(viewname, args=args))
    return f"{url}#{fragment}" if fragment else url


def unsubscribe_link(*, user_id: int, kind: str, channel: str) -> str:
    """The one-click unsubscribe page of ``kind`` on ``channel`` for ``user_id``."""
    token = unsubscribe_token(user_id=user_id, kind=kind, channel=channel)
    return absolute(reverse("web:unsubscribe", args=[token]))


def settings_link() -> str:
    """The page where a user chooses what they are told."""
    return absolute(reverse("web:notifications"))
