"""``manage.py janitor``: requeue matches whose worker was lost, resend lost messages.

The same service beat runs every LADDER_JANITOR_INTERVAL_S through the
workers' ``janitor`` task (docs/workers.md): running matches whose lease
expired go back to the queue (or are errored on their last attempt), queued
matches whose message is older than LADDER_QUEUED_GRACE_S are sent again, and
so are the smoke matches of hosted versions left pending that long; running
tournaments with no open match are advanced (next Swiss round, or finished). Safe to
run at any time: claiming a match is conditional, and a smoke match skips a
version that is no longer pending.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from digdown import serving
from ladder.bots.services import bot_versions_resend_pending
from ladder.matches.retries import match_requeue_stale
from ladder.tournaments.services import tournaments_advance_running


class Command(BaseCommand):
    help = "Requeue matches whose lease expired and resend queued matches whose message was lost."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--grace",
            type=float,
            default=settings.LADDER_QUEUED_GRACE_S,
            help="resend queued matches whose message is older than this, s "
            "(default LADDER_QUEUED_GRACE_S)",
        )
        parser.add_argument("--log-level", default="WARNING")

    def handle(self, *args: Any, **opts: Any) -> None:
        serving.configure_logging(opts["log_level"])
        report = match_requeue_stale(
            queued_grace_s=opts["grace"], max_attempts=settings.LADDER_MATCH_MAX_ATTEMPTS
        )
        smoke = bot_versions_resend_pending(grace_s=opts["grace"])
        advanced = tournaments_advance_running()
        self.stdout.write(
            f"requeued {len(report.requeued)} (lease expired) {report.requeued}, "
            f"resent {len(report.resent)} (message lost) {report.resent}, "
            f"errored {len(report.errored)} (last attempt) {report.errored}, "
            f"smoke matches resent {len(smoke)} (version pending) {smoke}, "
            f"tournaments advanced {advanced}"
        )
