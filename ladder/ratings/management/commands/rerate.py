"""``manage.py rerate [--ladder KEY ...] [--check] [--system NAME]``: recompute ratings.

Each ladder is replayed on its own (every configured ladder unless ``--ladder``
names some). With ``--check`` nothing is written: mismatches are printed and
the exit status is 1 if there is any. Without it the stored ratings are
rewritten to the recomputed values, and every bot gets an entry on the ladder
(how a newly configured ladder is opened to the existing bots). ``--system``
re-rates the whole history under that system and the ladder keeps rating with
it: switching a ladder's system is this recompute, never an edit.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from ladder.common.exceptions import ApplicationError
from ladder.ladders import ladder_get, ladders
from ladder.ratings.recompute import ratings_recompute, ratings_rewrite
from ladder.ratings.systems import LADDER_SYSTEMS


class Command(BaseCommand):
    help = "Recompute ratings from match history in recording order, per ladder."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--check", action="store_true", help="only compare; exit 1 on mismatch")
        parser.add_argument(
            "--system",
            choices=sorted(LADDER_SYSTEMS),
            help="re-rate under this system and keep it (not with --check)",
        )
        parser.add_argument(
            "--ladder", action="append", default=[], help="ladder key (repeatable; default: all)"
        )

    def handle(self, *args: object, **opts: Any) -> None:
        try:
            keys = [ladder_get(k).key for k in opts["ladder"]] or list(ladders())
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        if opts["check"] and opts["system"]:
            raise CommandError("--system rewrites the ratings: it cannot be combined with --check")
        found = 0
        for key in keys:
            rec = (
                ratings_recompute(ladder=key)
                if opts["check"]
                else ratings_rewrite(ladder=key, system=opts["system"])
            )
            for line in rec.mismatches:
                self.stdout.write(f"{key}: {line}")
            if rec.mismatch_count > len(rec.mismatches):
                self.stdout.write(f"{key}: ... {rec.mismatch_count - len(rec.mismatches)} more")
            verb = "found" if opts["check"] else "fixed"
            self.stdout.write(
                f"{key}: {rec.matches} results replayed, {len(rec.standings)} bots rated,"
                f" {rec.mismatch_count} mismatches {verb} (system {rec.system})"
            )
            found += rec.mismatch_count
        if opts["check"] and found:
            sys.exit(1)
