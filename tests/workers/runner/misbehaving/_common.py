"""Shared command line of the misbehaving test bots (on top of digdown.bot.parse_args)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from concurrent import futures
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc


def args(extra: list[tuple[str, type, object]]) -> argparse.Namespace:
    """`--listen`, `--port-file` plus the bot's own options, e.g. [("--after", int, 0)]."""
    p = argparse.ArgumentParser()
    p.add_argument("--listen", default="127.0.0.1:0")
    p.add_argument("--port-file", type=Path)
    for flag, typ, default in extra:
        p.add_argument(flag, type=typ, default=default)
    return p.parse_args(sys.argv[1:])


def write_port(path: Path, port: int) -> None:
    """Atomically: a reader never sees an empty or half-written port file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"{port}\n")
    tmp.replace(path)


def serve_raw(opts: argparse.Namespace, handlers: dict[str, Any]) -> None:
    """Serve ``digdown.v1.Bot`` from raw method handlers (bytes in, bytes out) plus health,
    until SIGTERM: a bot that can answer anything at all, without the SDK in the way."""
    server = grpc.server(futures.ThreadPoolExecutor(4), options=[("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("digdown.v1.Bot", handlers),)
    )
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port(opts.listen)
    assert port, "bind failed"
    server.start()
    servicer.set("digdown.v1.Bot", health_pb2.HealthCheckResponse.SERVING)
    write_port(opts.port_file, port)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while not stop.wait(0.5):
        pass
    server.stop(1).wait()
