"""Counting the database queries of gRPC calls served in this process (tests and benchmarks).

``QueryCounter`` is a server interceptor placed around the Ladder's ``CallGuard``
(``LadderServer(outer_interceptors=[...])``): each unary call's queries are
captured on the RPC thread that serves it, authentication included.
"""

from __future__ import annotations

import threading
from typing import Any

import grpc
from django.db import connection
from django.test.utils import CaptureQueriesContext


class QueryCounter(grpc.ServerInterceptor):
    """``last[method]``: the queries of the latest completed call of each unary method."""

    def __init__(self) -> None:
        self.last: dict[str, int] = {}
        self.lock = threading.Lock()

    def intercept_service(self, continuation: Any, details: Any) -> Any:
        handler = continuation(details)
        if handler is None or handler.unary_unary is None:
            return handler
        name = details.method.rsplit("/", 1)[-1]
        behavior = handler.unary_unary

        def counted(request: Any, context: Any) -> Any:
            with CaptureQueriesContext(connection) as ctx:
                try:
                    return behavior(request, context)
                finally:
                    with self.lock:
                        self.last[name] = len(ctx.captured_queries)

        return grpc.unary_unary_rpc_method_handler(
            counted,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
