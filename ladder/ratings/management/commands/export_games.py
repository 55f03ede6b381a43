"""``manage.py export_games``: the ladder's finished, revealed matches as a data set.

    manage.py export_games --out games.jsonl [--format jsonl|parquet] [--ladder KEY]
        [--season N] [--since ISO] [--until ISO] [--min-rating R] [--max-rating R]
        [--bot NAME] [--limit N]

JSON Lines: one match per line with its whole replay; Parquet (the ``export``
extra): one row per decision. Streamed (``ladder.ratings.exports``): memory
stays flat whatever the number of matches. ``--out -`` writes to stdout.
"""

from __future__ import annotations

import resource
import sys
from datetime import datetime
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from ladder.bots.selectors import bot_get_by_name
from ladder.common.exceptions import ApplicationError
from ladder.ratings import exports


class Command(BaseCommand):
    help = "Export finished, revealed matches as JSON Lines or Parquet, streamed."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--out", required=True, help="file to write ('-': stdout)")
        parser.add_argument("--format", choices=exports.FORMATS, default="jsonl")
        parser.add_argument("--ladder", default="")
        parser.add_argument("--season", type=int)
        parser.add_argument("--since", type=datetime.fromisoformat)
        parser.add_argument("--until", type=datetime.fromisoformat)
        parser.add_argument("--min-rating", type=float)
        parser.add_argument("--max-rating", type=float)
        parser.add_argument("--bot", help="only matches this bot played (by name)")
        parser.add_argument("--limit", type=int)

    def handle(self, *args: object, **opts: Any) -> None:
        try:
            flt = exports.ExportFilter(
                ladder=opts["ladder"],
                season=opts["season"],
                since=opts["since"],
                until=opts["until"],
                min_rating=None if opts["min_rating"] is None else round(opts["min_rating"] * 100),
                max_rating=None if opts["max_rating"] is None else round(opts["max_rating"] * 100),
                bot_id=bot_get_by_name(name=opts["bot"]).pk if opts["bot"] else None,
                limit=opts["limit"],
            )
            total = exports.export_queryset(flt).count()
            if flt.limit is not None:
                total = min(total, flt.limit)
            chunks = exports.export_chunks(flt, opts["format"])
            out = sys.stdout.buffer if opts["out"] == "-" else open(opts["out"], "wb")  # noqa: SIM115
            written = 0
            with out, tqdm(total=total, unit="match", disable=opts["out"] == "-") as bar:
                for chunk in chunks:
                    out.write(chunk)
                    written += len(chunk)
                    if opts["format"] == "jsonl":
                        bar.update(chunk.count(b"\n"))
                bar.update(total - bar.n)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.stderr.write(
            f"exported {total} matches, {written} bytes ({opts['format']});"
            f" peak memory of this process {peak_mib:.0f} MiB"
        )
