"""A delivery as what goes on the wire: an e-mail (Django's e-mail framework) or a JSON body.

Every e-mail carries its unsubscribe link twice: in the text, and in the
``List-Unsubscribe`` header with ``List-Unsubscribe-Post`` (RFC 8058), so mail
clients offer their own one-click unsubscribe button. Its ``Message-ID`` is
the delivery's own: should a message ever go out twice (a worker killed
between the SMTP server's acceptance and the row's update), mail clients show
it once. A webhook's body names the same links.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.mail import EmailMessage

from ladder.notifications.kinds import kind_label
from ladder.notifications.links import settings_link, unsubscribe_link
from ladder.notifications.models import Delivery

SUBJECT_PREFIX = "[Digging Down Ladder] "


def email_message(delivery: Delivery, *, to: str) -> EmailMessage:
    """The e-mail of ``delivery`` to the address ``to``."""
    unsubscribe = unsubscribe_link(
        user_id=delivery.user_id, kind=delivery.kind, channel=delivery.channel
    )
    text = delivery.body.rstrip()
    if delivery.link:
        text += f"\n\n{delivery.link}"
    text += (
        "\n\n-- \n"
        f"You get this e-mail because you chose to be told: {kind_label(delivery.kind)}.\n"
        f"Stop these e-mails (one click, no sign-in): {unsubscribe}\n"
        f"Choose what you are told and where: {settings_link()}\n"
    )
    return EmailMessage(
        subject=SUBJECT_PREFIX + delivery.subject,
        body=text,
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[to],
        headers={
            "Message-ID": f"<dd-notify-{delivery.pk}@{_domain()}>",
            "List-Unsubscribe": f"<{unsubscribe}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            "Auto-Submitted": "auto-generated",
            "X-Ladder-Event": delivery.kind,
        },
    )


def _domain() -> str:
    """The domain of the sender's address (Message-IDs are made under it)."""
    address = settings.DEFAULT_FROM_EMAIL.rsplit("<", 1)[-1].rstrip(">").strip()
    return address.rpartition("@")[2] or "localhost"


def webhook_msg_id(delivery: Delivery) -> str:
    """The ``webhook-id`` of a delivery: the same on every attempt."""
    return f"dd-notify-{delivery.pk}"


def webhook_body(delivery: Delivery) -> bytes:
    """The JSON body of ``delivery``'s webhook message (compact, UTF-8)."""
    payload: dict[str, Any] = {
        "id": webhook_msg_id(delivery),
        "type": delivery.kind,
        "key": delivery.key,
        "created_at": delivery.created_at.isoformat(),
        "subject": delivery.subject,
        "body": delivery.body,
        "link": delivery.link,
        "data": delivery.data,
        "unsubscribe_url": unsubscribe_link(
            user_id=delivery.user_id, kind=delivery.kind, channel=delivery.channel
        ),
        "settings_url": settings_link(),
    }
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
