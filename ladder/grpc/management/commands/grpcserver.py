"""``manage.py grpcserver --listen 127.0.0.1:50052``: serve digdown.v1.Ladder until SIGTERM."""

from __future__ import annotations

import ctypes
import os
import resource
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from digdown import serving
from ladder.common.ratelimit import parse_rate
from ladder.grpc.server import LadderServer
from telemetry.metrics import serve as serve_metrics

M_ARENA_MAX = -8  # glibc's mallopt parameter: how many malloc arenas the process may make
MALLOC_ARENAS = 2


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
        parser.add_argument(
            "--metrics-port",
            type=int,
            default=None,
            help="serve Prometheus /metrics on this port (default LADDER_METRICS_PORT; 0: off)",
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        # Before grpc starts its threads: each thread would get a malloc arena of its own
        # (up to 8 a core); 2 hold 10,000 idle streams in 1 KiB less each (connected-bots.md).
        limit_malloc_arenas()
        serving.configure_logging(opts["log_level"])
        raise_open_files_limit()
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
        serve_metrics(opts["metrics_port"])
        serving.serve_until_signalled(server, grace_s=opts["grace"], port_file=opts["port_file"])


def raise_open_files_limit() -> int:
    """Raise this process's open-files limit (RLIMIT_NOFILE) from its soft value to its
    hard one: each connected bot's stream is a connection (a descriptor), and the soft
    default (often 1,024) would refuse connections long before the streams limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas of this process (``MALLOC_ARENA_MAX``, set in the process
    so every way of starting the server gets it); an operator's ``MALLOC_ARENA_MAX`` wins.
    False when not applied (set by the environment, or a C library without ``mallopt``)."""
    if "MALLOC_ARENA_MAX" in os.environ:
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to cap
        return False
    return bool(mallopt(M_ARENA_MAX, arenas))
