"""``manage.py token_create USER [--name N]``: print a new API token for a user (dev aid)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from ladder.accounts.models import User
from ladder.accounts.services import token_create


class Command(BaseCommand):
    help = "Create an API token for a user and print its secret (shown once)."

    def add_arguments(self, parser) -> None:  # type: ignore[no-untyped-def]
        parser.add_argument("username")
        parser.add_argument("--name", default="cli")

    def handle(self, *args: object, **opts: str) -> None:
        user = User.objects.filter(username=opts["username"]).first()
        if user is None:
            raise CommandError(f"no user {opts['username']!r}")
        self.stdout.write(token_create(user=user, name=opts["name"]).secret)
