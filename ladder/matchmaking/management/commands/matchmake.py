"""``manage.py matchmake``: one matchmaker pass, as beat runs it every LADDER_MATCHMAKER_INTERVAL_S.

Tops each ladder up to the target number of open matches (docs/matchmaking.md);
prints one line per ladder. Safe next to beat: passes are serialized.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from digdown import serving
from ladder.matchmaking.services import matchmake


class Command(BaseCommand):
    help = "Create ladder matches until each ladder has its target number of open matches."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--ladder",
            action="append",
            help="a ladder to fill (repeatable; default LADDER_MATCHMAKER_LADDERS)",
        )
        parser.add_argument(
            "--target",
            type=int,
            default=settings.LADDER_MATCHMAKER_TARGET,
            help="open matches to reach per ladder (default LADDER_MATCHMAKER_TARGET)",
        )
        parser.add_argument("--seed", type=int, help="the planner's seed (default: random)")
        parser.add_argument("--log-level", default="WARNING")

    def handle(self, *args: Any, **opts: Any) -> None:
        serving.configure_logging(opts["log_level"])
        for report in matchmake(ladders=opts["ladder"], target=opts["target"], seed=opts["seed"]):
            self.stdout.write(report.line())
