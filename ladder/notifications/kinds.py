"""What a user can be told about, in words, and whether it is sent by default.

A user with no stored choice for a kind gets its defaults: e-mail for what
needs their attention (their bot stopped playing or failed its smoke match, a
competition they care about moved on), not for good news they did not ask for
(a smoke match passed). A webhook, once its owner sets a URL, gets every kind
unless they turn one off: a program does not mind the noise.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models


class Kind(models.TextChoices):
    BOT_SUSPENDED = "bot_suspended", "A bot of mine was suspended"
    SMOKE_FAILED = "smoke_failed", "A new version failed its smoke match"
    SMOKE_PASSED = "smoke_passed", "A new version passed its smoke match"
    CONNECTED_REFUSED = "connected_refused", "A connected bot of mine was refused"
    COMPETITION_PHASE = "competition_phase", "A competition's phase changed"
    COMPETITION_RESULT = "competition_result", "A competition's final result"


class Channel(models.TextChoices):
    EMAIL = "email", "e-mail"
    WEBHOOK = "webhook", "webhook"


@dataclass(frozen=True)
class KindDefaults:
    email: bool
    webhook: bool


DEFAULTS: dict[str, KindDefaults] = {
    Kind.BOT_SUSPENDED: KindDefaults(email=True, webhook=True),
    Kind.SMOKE_FAILED: KindDefaults(email=True, webhook=True),
    Kind.SMOKE_PASSED: KindDefaults(email=False, webhook=True),
    Kind.CONNECTED_REFUSED: KindDefaults(email=True, webhook=True),
    Kind.COMPETITION_PHASE: KindDefaults(email=True, webhook=True),
    Kind.COMPETITION_RESULT: KindDefaults(email=True, webhook=True),
}


def kind_label(kind: str) -> str:
    """The words for a kind (its value when unknown)."""
    return str(dict(Kind.choices).get(kind, kind))
