"""Synchronous gRPC handlers served by a ``grpc.aio`` server, each call on a thread pool.

Why: the Ladder server holds connected bots' Play streams on an asyncio loop (a
coroutine each, no thread), while every other method is synchronous Django code
(the ORM must not run on the loop). grpc.aio cannot take ``grpc.ServerInterceptor``
interceptors, and the context its own thread-pool fallback (``migration_thread_pool``)
hands to a synchronous handler lacks ``code()``, ``is_active()`` and ``cancel()``,
which the project's interceptors use. So `SyncBridge` (one aio interceptor) applies
the synchronous interceptors (``grpc.ServerInterceptor``) as the thread-pool server
did, and `threaded` turns the result into a coroutine that
runs it on a bounded ``ThreadPoolExecutor`` with a `ThreadContext`: the synchronous
``grpc.ServicerContext`` the handler knew, backed by the aio call.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor
from typing import Any

import grpc

from digdown import serving

log = logging.getLogger("ladder.grpc")

WRITE_TIMEOUT_S = 300.0  # one message of a server stream (a replay chunk) to a slow reader


class Aborted(Exception):
    """Raised by `ThreadContext.abort`: the call ends with the status it recorded."""


class ThreadContext:
    """The synchronous servicer context of one call of the aio server, for a pool thread.

    Reads are the aio context's own (they only read the call's state); the status is
    recorded here and sent by the coroutine that ran the handler, on the loop.
    """

    def __init__(self, context: grpc.aio.ServicerContext, loop: asyncio.AbstractEventLoop) -> None:
        self._context = context
        self._loop = loop
        self._code: grpc.StatusCode | None = None
        self._details = ""
        self.aborted = False

    def invocation_metadata(self) -> Any:
        return self._context.invocation_metadata()

    def peer(self) -> str:
        return self._context.peer()

    def time_remaining(self) -> float | None:
        return self._context.time_remaining()

    def set_trailing_metadata(self, metadata: Any) -> None:
        self._context.set_trailing_metadata(metadata)

    def is_active(self) -> bool:
        return not (self._context.done() or self._context.cancelled())

    def add_callback(self, callback: Callable[[], None]) -> bool:
        self._context.add_done_callback(lambda _context: callback())  # type: ignore[arg-type]
        return True

    def set_code(self, code: grpc.StatusCode) -> None:
        self._code = code

    def set_details(self, details: str) -> None:
        self._details = details

    def code(self) -> grpc.StatusCode | None:
        return self._code

    def details(self) -> str:
        return self._details

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        self._code, self._details, self.aborted = code, details, True
        raise Aborted(details)

    def cancel(self) -> None:
        """End the call as cancelled (grpc.aio cancels the task serving it)."""
        self._code, self._details, self.aborted = grpc.StatusCode.CANCELLED, "cancelled", True

    async def finish(self, error: BaseException | None) -> None:
        """On the loop, once the handler returned (``error`` None) or raised ``error``."""
        if self.aborted or self._code not in (None, grpc.StatusCode.OK):
            await self._context.abort(self._code or grpc.StatusCode.UNKNOWN, self._details)
        if error is not None:
            log.error("a call failed unexpectedly", exc_info=error)
            await self._context.abort(
                grpc.StatusCode.UNKNOWN, f"Exception calling application: {error}"
            )


Offload = Callable[..., Awaitable[Any]]


def offloader(executor: Executor, loop: asyncio.AbstractEventLoop) -> Offload:
    """``await offload(fn, *args)``: ``fn(*args)`` on ``executor``, in a copy of the caller's
    context (its request id and caller go along to the thread)."""

    def offload(fn: Callable[..., Any], *args: Any) -> Awaitable[Any]:
        context = contextvars.copy_context()
        return loop.run_in_executor(executor, functools.partial(context.run, fn, *args))

    return offload


def threaded(
    handler: grpc.RpcMethodHandler, executor: Executor, loop: asyncio.AbstractEventLoop
) -> grpc.RpcMethodHandler:
    """A synchronous unary-request ``handler`` as a coroutine handler that runs it on
    ``executor``; a streamed response is written as it is produced, with backpressure."""
    offload = offloader(executor, loop)
    if handler.unary_unary is not None:
        unary = handler.unary_unary

        async def call(request: Any, context: grpc.aio.ServicerContext) -> Any:
            sync = ThreadContext(context, loop)
            reply = None
            try:
                reply = await offload(unary, request, sync)
            except Aborted:
                pass
            except Exception as exc:
                await sync.finish(exc)  # ends the call
            await sync.finish(None)
            return reply

        return grpc.unary_unary_rpc_method_handler(
            call,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        streamed = handler.unary_stream

        def drive(request: Any, context: grpc.aio.ServicerContext, sync: ThreadContext) -> None:
            for message in streamed(request, sync):  # type: ignore[arg-type]
                asyncio.run_coroutine_threadsafe(context.write(message), loop).result(
                    WRITE_TIMEOUT_S
                )

        async def stream(request: Any, context: grpc.aio.ServicerContext) -> None:
            sync = ThreadContext(context, loop)
            try:
                await offload(drive, request, context, sync)
            except Aborted:
                pass
            except Exception as exc:
                await sync.finish(exc)
            await sync.finish(None)

        return grpc.unary_stream_rpc_method_handler(
            stream,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    raise TypeError("only unary-request methods are served on threads")


def _answer(handler: grpc.RpcMethodHandler, _details: grpc.HandlerCallDetails) -> Any:
    return handler


AsyncHandlerFor = Callable[[str, grpc.RpcMethodHandler], grpc.RpcMethodHandler | None]


class SyncBridge(grpc.aio.ServerInterceptor):
    """The synchronous ``interceptors`` (outermost first) around every method of the
    served services, run on ``executor``; health and reflection (coroutines already)
    pass through, and ``own(method, handler)`` may serve a method as a coroutine of
    its own (Play) by returning its handler."""

    def __init__(
        self,
        interceptors: Sequence[grpc.ServerInterceptor],
        executor: Executor,
        loop: asyncio.AbstractEventLoop,
        own: AsyncHandlerFor = lambda method, handler: None,
    ) -> None:
        self.interceptors = tuple(reversed(interceptors))  # innermost wraps first
        self.executor = executor
        self.loop = loop
        self.own = own

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler | None]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        found = await continuation(handler_call_details)
        method: str = handler_call_details.method
        if found is None or method.startswith(
            (serving.HEALTH_PREFIX, *serving.REFLECTION_PREFIXES)
        ):
            return found
        served = self.own(method, found)
        if served is not None:
            return served
        handler = found
        for interceptor in self.interceptors:
            # A synchronous interceptor, given a continuation that answers the handler.
            wrapped = interceptor.intercept_service(
                functools.partial(_answer, handler), handler_call_details
            )
            if wrapped is None:
                return None
            handler = wrapped
        return threaded(handler, self.executor, self.loop)
