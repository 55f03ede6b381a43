"""``manage.py playmatch --bots A,B[,C,D] [--seed S] [--difficulty D] [--unrated]``.

Plays one match now, the way every match is played: it creates the match
(which sends it to the workers, as a challenge over REST or gRPC does), then
follows it until a worker has played and recorded it, and prints the ranks,
forfeits with their reasons, and rating changes. It plays nothing itself, so
a worker must run (``celery -A workers.celery_app worker``; docs/workers.md);
it says so when none has taken the match after a while. Interrupting it
leaves the match queued: a worker plays it later.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from ladder.bots.selectors import bot_get_by_name
from ladder.common.elo import points
from ladder.common.exceptions import ApplicationError
from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.matches.spec import MatchSpec

POLL_S = 0.2
NO_WORKER_HINT_S = 10.0
DONE = {Match.Status.FINISHED, Match.Status.ERRORED, Match.Status.CANCELLED}


def _points(hundredths: int | None) -> str:
    return "-" if hundredths is None else f"{points(hundredths):.2f}"


class Command(BaseCommand):
    help = "Play one match now (through the workers; hosted bots in the sandbox) and show it."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--bots", required=True, help="2-4 bot names, comma-separated")
        parser.add_argument("--seed", type=int, default=None, help="setup seed (default random)")
        parser.add_argument("--difficulty", default="normal", choices=Match.Difficulty.values)
        parser.add_argument("--unrated", action="store_true", help="do not change ratings")
        parser.add_argument(
            "--timeout",
            type=float,
            default=float(settings.LADDER_MATCH_HARD_LIMIT_S),
            help="give up waiting after this many seconds (the match stays queued)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        names = [n.strip() for n in opts["bots"].split(",") if n.strip()]
        try:
            bots = [bot_get_by_name(name=n) for n in names]
            match = match_create(
                MatchSpec(
                    bot_ids=[b.pk for b in bots],
                    seed=opts["seed"],
                    difficulty=opts["difficulty"],
                    rated=not opts["unrated"],
                )
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"match {match.pk}: {' vs '.join(b.name for b in bots)}, queued")
        try:
            match = self._follow(match.pk, opts["timeout"])
        except KeyboardInterrupt:
            raise CommandError(
                f"interrupted: match {match.pk} stays queued; a worker will play it"
            ) from None
        if match.status != Match.Status.FINISHED:
            raise CommandError(f"match {match.pk} {match.status}: {match.error}")
        self._show(match)

    def _follow(self, match_id: int, timeout_s: float) -> Match:
        """Poll the match until it is done, saying what happens to it; bounded by ``timeout_s``."""
        started = time.monotonic()
        seen: tuple[str, int] = (Match.Status.QUEUED, 0)
        hinted = False
        while True:
            match = Match.objects.get(pk=match_id)
            now = (match.status, match.attempts)
            if now != seen:
                seen = now
                if match.status == Match.Status.RUNNING:
                    where = f"{match.claimed_by} (attempt {match.attempts})"
                    self.stdout.write(f"match {match_id}: running on {where}")
                elif match.status == Match.Status.QUEUED:
                    self.stdout.write(f"match {match_id}: queued again ({match.error})")
            if match.status in DONE:
                return match
            waited = time.monotonic() - started
            if not hinted and match.attempts == 0 and waited > NO_WORKER_HINT_S:
                hinted = True
                self.stdout.write(
                    f"match {match_id}: no worker has taken it yet; is one running? "
                    "(celery -A workers.celery_app worker)"
                )
            if waited > timeout_s:
                raise CommandError(
                    f"match {match_id} is still {match.status} after {timeout_s:g} s; "
                    "a worker will finish it"
                )
            time.sleep(POLL_S)

    def _show(self, match: Match) -> None:
        result = match.result
        self.stdout.write(
            f"match {match.pk}: finished, {result.reason} after {result.rounds} rounds "
            f"(attempt {match.attempts}, {match.claimed_by})"
        )
        for seat in match.seats.select_related("bot").order_by("rank", "seat"):
            delta = seat.rating_delta
            change = "" if delta is None else f" ({points(delta):+.2f})"
            why = f"  ({seat.forfeit_reason})" if seat.forfeit_reason else ""
            self.stdout.write(
                f"  rank {seat.rank}  seat {seat.seat}  {seat.bot.name:<20} "
                f"{seat.ended or '-':<10} faults {seat.faults}  "
                f"rating {_points(seat.rating_before)} -> {_points(seat.rating_after)}{change}{why}"
            )
        self.stdout.write(
            f"replay: {match.replay.name} ({match.replay_size} bytes, sha256 {match.replay_sha256})"
        )
