"""``manage.py start_season --ladder KEY [--shrink 0.5]``: end a ladder's season, start the next.

The finished season's final table is kept (online standings and the official
batch maximum-likelihood re-rating); every entry is softly reset (see
``ladder.ratings.services.season_start``). Matchmaking and tournaments go on.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ladder.common.exceptions import ApplicationError
from ladder.ladders import ladder_get
from ladder.ratings.services import season_start


class Command(BaseCommand):
    help = "End a ladder's current season and start the next (a soft reset)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--ladder", default="", help="ladder key (default: the default)")
        parser.add_argument(
            "--shrink", type=float, help="share of (rating - start) kept (LADDER_SEASON_SHRINK)"
        )

    def handle(self, *args: object, **opts: Any) -> None:
        try:
            key = ladder_get(opts["ladder"] or None).key
            season = season_start(ladder=key, shrink=opts["shrink"])
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            f"{key}: season {season.number - 1} finished, season {season.number} started"
            f" ({season.system}, ratings keep {season.shrink:g} of their distance from the start)"
        )
