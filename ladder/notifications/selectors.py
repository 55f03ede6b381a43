"""Reads: what a user chose (stored or the defaults), their webhook, their deliveries."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from ladder.accounts.models import User
from ladder.notifications.kinds import DEFAULTS, Channel, Kind, kind_label
from ladder.notifications.models import Delivery, Subscription, Webhook


@dataclass(frozen=True)
class Choice:
    """A user's channels for one kind, stored or by default."""

    kind: str
    label: str
    email: bool
    webhook: bool
    stored: bool

    def wants(self, channel: str) -> bool:
        return self.email if channel == Channel.EMAIL else self.webhook


def choices_of(*, user: User) -> list[Choice]:
    """Every kind, in the order of ``Kind``, with the user's channels for it."""
    stored = {s.kind: s for s in Subscription.objects.filter(user=user)}
    out = []
    for kind in Kind.values:
        row = stored.get(kind)
        default = DEFAULTS[kind]
        out.append(
            Choice(
                kind=kind,
                label=kind_label(kind),
                email=row.email if row else default.email,
                webhook=row.webhook if row else default.webhook,
                stored=row is not None,
            )
        )
    return out


def choice_of(*, user_id: int, kind: str) -> Choice:
    """The user's channels for one kind."""
    row = Subscription.objects.filter(user_id=user_id, kind=kind).first()
    default = DEFAULTS[kind]
    return Choice(
        kind=kind,
        label=kind_label(kind),
        email=row.email if row else default.email,
        webhook=row.webhook if row else default.webhook,
        stored=row is not None,
    )


def webhook_of(*, user_id: int) -> Webhook | None:
    return Webhook.objects.filter(user_id=user_id).first()


def deliveries_of(*, user: User) -> QuerySet[Delivery]:
    """The user's deliveries, newest first."""
    return Delivery.objects.filter(user=user).order_by("-id")
