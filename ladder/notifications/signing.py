"""The signatures of webhook messages and the tokens of unsubscribe links.

Webhooks are signed as the Standard Webhooks specification says
(https://www.standardwebhooks.com/), so a receiver can verify them with that
project's libraries in many languages, or with a few lines of HMAC
(docs/notifications.md): three headers, ``webhook-id`` (the same on every
attempt of one message: a receiver drops what it has seen), ``webhook-timestamp``
(Unix seconds: a receiver refuses old ones, so a captured message cannot be
replayed later) and ``webhook-signature``, ``v1,`` and the base64 HMAC-SHA256
of ``id.timestamp.body`` under the user's secret (``whsec_`` and base64 of
its key bytes).

Unsubscribe tokens are Django's signed values (the site's SECRET_KEY, a salt of
their own): they name the user, the kind and the channel, and never expire,
since a link in an old e-mail must still work.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass

from django.core import signing

SECRET_PREFIX = "whsec_"
SECRET_BYTES = 32
UNSUBSCRIBE_SALT = "ladder.notifications.unsubscribe"


def webhook_secret_new() -> str:
    """A fresh webhook secret: ``whsec_`` and the base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(SECRET_BYTES)).decode()


def _key(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX))


def webhook_signature(*, secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header of ``body``: ``v1,`` and the base64 HMAC-SHA256."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def webhook_headers(*, secret: str, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """Every header a webhook message carries besides its content type."""
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": webhook_signature(
            secret=secret, msg_id=msg_id, timestamp=timestamp, body=body
        ),
    }


@dataclass(frozen=True)
class UnsubscribeToken:
    """Who an unsubscribe link is for, which kind and which channel it switches off."""

    user_id: int
    kind: str
    channel: str


def unsubscribe_token(*, user_id: int, kind: str, channel: str) -> str:
    """The signed token of an unsubscribe link for ``user_id``, ``kind`` and ``channel``."""
    return signing.dumps({"u": user_id, "k": kind, "c": channel}, salt=UNSUBSCRIBE_SALT)


def unsubscribe_token_read(token: str) -> UnsubscribeToken | None:
    """The token's user and kind, or None when it was not signed here (or is garbled)."""
    try:
        data = signing.loads(token, salt=UNSUBSCRIBE_SALT)
    except signing.BadSignature:
        return None
    if not isinstance(data, dict):
        return None
    user_id, kind, channel = data.get("u"), data.get("k"), data.get("c")
    if not isinstance(user_id, int) or not isinstance(kind, str) or not isinstance(channel, str):
        return None
    return UnsubscribeToken(user_id=user_id, kind=kind, channel=channel)
