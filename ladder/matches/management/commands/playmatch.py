"""``manage.py playmatch --bots A,B[,C,D] [--seed S] [--difficulty D] [--engine ADDR]``.

Plays one rated match now (operators trying bots, tests needing real matches):
creates it, plays it through the engine service and the match runner, records
it exactly once, and prints the ranks and rating changes. Without ``--engine``
(and without ENGINE_ADDRESS) a local engine subprocess runs for the duration.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from digdown import serving
from ladder.bots.selectors import bot_get_by_name
from ladder.common.exceptions import ApplicationError
from ladder.matches.models import Match
from ladder.matches.play import engine_address, match_play, playable_check
from ladder.matches.services import match_create
from ladder.ratings.elo import points
from workers.runner import TimeControl


def _points(hundredths: int | None) -> str:
    return "-" if hundredths is None else f"{points(hundredths):.2f}"


class Command(BaseCommand):
    help = "Play one match between remote bots now and record it (result, replay, ratings)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--bots", required=True, help="2-4 bot names, comma-separated")
        parser.add_argument("--seed", type=int, default=None, help="setup seed (default random)")
        parser.add_argument("--difficulty", default="normal", choices=Match.Difficulty.values)
        parser.add_argument("--engine", default="", help="engine host:port (default: start one)")
        parser.add_argument("--unrated", action="store_true", help="do not change ratings")
        parser.add_argument("--deadline", type=float, default=1.0, help="per-decision deadline, s")
        parser.add_argument("--bank", type=float, default=30.0, help="per-seat time bank, s")
        parser.add_argument("--log-level", default="WARNING")

    def handle(self, *args: Any, **opts: Any) -> None:
        serving.configure_logging(opts["log_level"])
        names = [n.strip() for n in opts["bots"].split(",") if n.strip()]
        try:
            bots = [bot_get_by_name(name=n) for n in names]
            playable_check(bots)
            match = match_create(
                bot_ids=[b.pk for b in bots],
                seed=opts["seed"],
                difficulty=opts["difficulty"],
                rated=not opts["unrated"],
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"match {match.pk}: {' vs '.join(b.name for b in bots)}, queued")
        tc = TimeControl(decision_s=opts["deadline"], bank_s=opts["bank"])
        progress_every = 100

        def on_progress(ply: int) -> None:
            if ply and ply % progress_every == 0:
                self.stdout.write(f"  ply {ply}")

        try:
            with engine_address(opts["engine"] or None) as engine:
                self.stdout.write(f"match {match.pk}: playing on engine {engine}")
                report = match_play(
                    match_id=match.pk,
                    engine_address=engine,
                    worker=f"playmatch@{socket.gethostname()}:{os.getpid()}",
                    time_control=tc,
                    on_progress=on_progress,
                )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        except OSError as exc:
            raise CommandError(f"engine: {exc}") from exc
        result = report.outcome.result
        m = report.match
        self.stdout.write(
            f"match {m.pk}: {m.status}, {result.get('reason')} after {result.get('rounds')} rounds"
            f", {report.outcome.decisions} decisions in {report.outcome.duration_s:.2f} s"
            + ("" if report.recorded else " (already recorded)")
        )
        for seat in m.seats.select_related("bot").order_by("rank", "seat"):
            delta = seat.rating_delta
            change = "" if delta is None else f" ({points(delta):+.2f})"
            self.stdout.write(
                f"  rank {seat.rank}  seat {seat.seat}  {seat.bot.name:<20} "
                f"{seat.ended or '-':<10} faults {seat.faults}  "
                f"rating {_points(seat.rating_before)} -> {_points(seat.rating_after)}{change}"
            )
        self.stdout.write(
            f"replay: {m.replay.name} ({m.replay_size} bytes, sha256 {m.replay_sha256})"
        )
