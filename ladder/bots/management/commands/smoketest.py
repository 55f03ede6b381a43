"""``manage.py smoketest [--bot NAME --number N] [--watch] [--engine ADDR]``.

Plays the smoke match of new hosted versions (a short game against the random
house bot, in the sandbox) and records each as VALID or INVALID with its
outcome and log, which the owner reads through the API. Uploads never wait for
it: they return PENDING. Until the Celery workers take this over, run it once
after uploads, or with ``--watch`` next to the ladder to check each new version
as it arrives. Without ``--engine`` (and ENGINE_ADDRESS) a local engine
subprocess runs for the duration.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from digdown import serving
from ladder.bots.models import BotVersion
from ladder.bots.selectors import bot_get_by_name, bot_versions_pending
from ladder.common.exceptions import ApplicationError
from ladder.matches.play import engine_address
from workers.hosted import hosted_refusal, version_smoke
from workers.runner import RunnerError


class Command(BaseCommand):
    help = "Play the smoke match of pending hosted versions (or one version) and record it."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--bot", help="only this bot (its newest version, or --number)")
        parser.add_argument("--number", type=int, help="version number (default: the newest)")
        parser.add_argument("--watch", action="store_true", help="keep checking new versions")
        parser.add_argument("--interval", type=float, default=2.0, help="--watch poll, s")
        parser.add_argument("--engine", default="", help="engine host:port (default: start one)")
        parser.add_argument("--log-level", default="WARNING")

    def handle(self, *args: Any, **opts: Any) -> None:
        serving.configure_logging(opts["log_level"])
        if why := hosted_refusal():
            raise CommandError(why)
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        try:
            with engine_address(opts["engine"] or None) as engine:
                while True:
                    for version in self._versions(opts):
                        self._smoke(version, engine)
                        if stop.is_set():
                            return
                    if not opts["watch"] or stop.wait(opts["interval"]):
                        return
        except OSError as exc:
            raise CommandError(f"engine: {exc}") from exc

    def _versions(self, opts: dict[str, Any]) -> list[BotVersion]:
        if not opts["bot"]:
            return list(bot_versions_pending()[:50])
        try:
            bot = bot_get_by_name(name=opts["bot"])
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        versions = bot.versions.order_by("-number")
        if opts["number"]:
            versions = versions.filter(number=opts["number"])
        found = versions.first()
        if found is None:
            raise CommandError(f"bot {bot.name} has no such version")
        return [found]

    def _smoke(self, version: BotVersion, engine: str) -> None:
        label = f"{version.bot.name} v{version.number}"
        self.stdout.write(f"{label}: smoke match on engine {engine}")
        try:
            done = version_smoke(version_id=version.pk, engine_address=engine)
        except RunnerError as exc:
            self.stderr.write(f"{label}: engine trouble, still pending: {exc}")
            return
        except ApplicationError as exc:
            raise CommandError(f"{label}: {exc.message}") from exc
        self.stdout.write(f"{label}: {done.status.upper()} - {done.smoke_outcome}")
