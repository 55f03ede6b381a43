"""A gRPC server of generic handlers on loopback, for tests of the calls themselves.

Also imported by scripts that tests run in a fresh interpreter (their grpc settings
chosen first), so it imports nothing of the project's.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent import futures
from typing import Any

import grpc


def serve(service: str, handlers: Mapping[str, Any], workers: int = 4) -> tuple[grpc.Server, str]:
    """``handlers`` (method name -> grpc's method handler) of ``service``, started on a free
    port of 127.0.0.1; the server and its address."""
    server = grpc.server(futures.ThreadPoolExecutor(workers))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"
