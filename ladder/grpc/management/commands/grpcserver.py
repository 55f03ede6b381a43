"""``manage.py grpcserver --listen 127.0.0.1:50052``: serve digdown.v1.Ladder until SIGTERM."""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from ladder.grpc.auth import parse_rate
from ladder.grpc.server import LadderServer

log = logging.getLogger("ladder.grpc")


class Command(BaseCommand):
    help = "Serve the Ladder gRPC service for bot authors (health, reflection, SIGTERM drain)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--listen", default="127.0.0.1:50052", help="host:port (0 = any)")
        parser.add_argument("--port-file", type=Path, help="write the bound port here")
        parser.add_argument("--max-workers", type=int, default=8, help="RPC threads")
        parser.add_argument(
            "--max-concurrent-rpcs", type=int, default=64, help="more: RESOURCE_EXHAUSTED"
        )
        parser.add_argument(
            "--rate",
            default=None,
            help=f"calls per token/peer, e.g. 600/min; 0 = off "
            f"(default LADDER_GRPC_THROTTLE={settings.LADDER_GRPC_THROTTLE})",
        )
        parser.add_argument("--grace", type=float, default=5.0, help="seconds to drain at stop")
        parser.add_argument("--no-reflection", action="store_true")
        parser.add_argument("--log-level", default="INFO")

    def handle(self, *args: Any, **opts: Any) -> None:
        logging.basicConfig(
            level=opts["log_level"].upper(),
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
            stream=sys.stderr,
        )
        try:
            parse_rate(opts["rate"] or settings.LADDER_GRPC_THROTTLE)
            server = LadderServer(
                opts["listen"],
                max_workers=opts["max_workers"],
                max_concurrent_rpcs=opts["max_concurrent_rpcs"],
                rate=opts["rate"],
                reflection_enabled=not opts["no_reflection"],
            )
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        stop = threading.Event()

        def on_signal(signum: int, _frame: Any) -> None:
            log.info("received %s", signal.Signals(signum).name)
            stop.set()

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        server.start()
        if opts["port_file"]:
            tmp = opts["port_file"].with_suffix(".tmp")
            tmp.write_text(f"{server.port}\n")
            tmp.replace(opts["port_file"])  # atomic: readers never see half a port
        while not stop.wait(1.0):
            pass
        started = time.monotonic()
        server.stop(opts["grace"])
        log.info("exit after %.2f s shutdown", time.monotonic() - started)
