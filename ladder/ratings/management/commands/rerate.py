"""``manage.py rerate [--check]``: recompute every rating from match history.

With ``--check`` nothing is written: mismatches are printed and the exit status
is 1 if there is any. Without it the stored ratings are rewritten to the
recomputed values (under locks on every bot row).
"""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand

from ladder.ratings.services import ratings_recompute, ratings_rewrite


class Command(BaseCommand):
    help = "Recompute all ratings from match history in recording order."

    def add_arguments(self, parser) -> None:  # type: ignore[no-untyped-def]
        parser.add_argument("--check", action="store_true", help="only compare; exit 1 on mismatch")

    def handle(self, *args: object, **opts: object) -> None:
        rec = ratings_recompute() if opts["check"] else ratings_rewrite()
        for line in rec.mismatches:
            self.stdout.write(line)
        verb = "found" if opts["check"] else "fixed"
        self.stdout.write(
            f"{rec.matches} results replayed, {len(rec.ratings)} bots,"
            f" {len(rec.mismatches)} mismatches {verb}"
        )
        if opts["check"] and rec.mismatches:
            sys.exit(1)
