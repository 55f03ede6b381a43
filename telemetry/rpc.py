"""gRPC server metrics: calls by method and status, and how long they took.

The names are those of the go-grpc-prometheus family, which Grafana boards and
alert rules for gRPC already expect. Health checks and reflection are left
out: a balancer's probes every few seconds would drown the calls that matter.
The interceptor goes outside the server's call limit (``digdown.serving``), so
calls refused with RESOURCE_EXHAUSTED are counted too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import grpc
from prometheus_client import Counter, Histogram

from digdown import serving

STARTED = Counter(
    "grpc_server_started_total", "gRPC calls started", ["grpc_service", "grpc_method"]
)
HANDLED = Counter(
    "grpc_server_handled_total",
    "gRPC calls finished, by status code",
    ["grpc_service", "grpc_method", "grpc_code"],
)
SECONDS = Histogram(
    "grpc_server_handling_seconds",
    "Time from a call's start to its status (a stream: its whole life)",
    ["grpc_service", "grpc_method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)


class MetricsInterceptor(serving.HandlerInterceptor):
    """Counts and times every call of the served services."""

    def wrap(
        self, method: str, handler: grpc.RpcMethodHandler[Any, Any]
    ) -> grpc.RpcMethodHandler[Any, Any]:
        if method.startswith(serving.HEALTH_PREFIX) or method.startswith(
            serving.REFLECTION_PREFIXES
        ):
            return handler
        service, _, name = method.lstrip("/").partition("/")

        @contextmanager
        def measured(context: grpc.ServicerContext) -> Iterator[None]:
            STARTED.labels(service, name).inc()
            started = time.perf_counter()
            code: object = grpc.StatusCode.UNKNOWN
            try:
                yield
                code = _status(context) or grpc.StatusCode.OK
            except BaseException:
                # context.abort raises after setting the code; anything else is UNKNOWN.
                code = _status(context) or grpc.StatusCode.UNKNOWN
                raise
            finally:
                HANDLED.labels(service, name, _code_name(code)).inc()
                SECONDS.labels(service, name).observe(time.perf_counter() - started)

        return serving.wrap_handler(handler, measured)


def _status(context: grpc.ServicerContext) -> object:
    """The status the handler set (grpcio has ``code()``; its type stubs do not say so)."""
    code: Callable[[], object] = context.code  # type: ignore[attr-defined]
    return code()


def _code_name(code: object) -> str:
    """``context.code()`` may be a StatusCode or (set by some paths) a plain int."""
    if isinstance(code, grpc.StatusCode):
        return code.name
    for status in grpc.StatusCode:
        if status.value[0] == code:
            return status.name
    return "UNKNOWN"
