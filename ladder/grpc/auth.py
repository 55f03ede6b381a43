"""The one interceptor every Ladder call goes through.

Why an interceptor that *wraps the handler* instead of checking metadata in
``intercept_service`` itself: grpcio calls ``intercept_service`` on its polling
thread, so a database lookup there would stall every other call. The wrapped
behaviour runs on the RPC thread pool, where it:

1. closes stale database connections before and after the call (a long-running
   server must not keep or reuse broken connections: ``close_old_connections``);
2. authenticates ``authorization: Bearer <token>`` through ``token_authenticate``
   (hashed tokens, looked up by digest). Write calls need a token; the public
   reads (leaderboard, matches, replays) work without one, like the REST API,
   but a token that is sent must be valid;
3. throttles per token (anonymous calls per peer address) with a fixed window
   in Django's cache -> RESOURCE_EXHAUSTED;
4. maps service errors to status codes with their message; anything unexpected
   is logged with its traceback here and the client gets INTERNAL with a short
   message, never the traceback.

Health and reflection are not wrapped: probes need neither a token nor the DB.
"""

from __future__ import annotations

import contextvars
import logging
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import grpc
from django.conf import settings
from django.core.cache import cache
from django.db import close_old_connections

from digdown import serving
from ladder.accounts.models import User
from ladder.accounts.services import token_authenticate
from ladder.common import exceptions as app

log = logging.getLogger("ladder.grpc")

SERVICE_PREFIX = "/digdown.v1.Ladder/"
# Reads of public data: the REST API serves them without credentials too.
PUBLIC_METHODS = frozenset(
    {"Leaderboard", "ListMatches", "GetMatch", "DownloadReplay", "ListLadders"}
)
MAX_DETAIL = 2000  # status details travel in HTTP/2 trailers: keep them small

_PERIODS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60}
_PERIODS |= {"h": 3600, "hour": 3600, "d": 86400, "day": 86400}


GrpcError = serving.StatusError
"""Raised by the servicer when it wants a specific status (e.g. ALREADY_EXISTS)."""


@dataclass(frozen=True)
class Caller:
    """Who is calling: a user (token) or nobody, and the key their throttle counts under."""

    user: User | None
    throttle_key: str


_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("caller", default=None)


def current_user() -> User | None:
    """The authenticated user of the call being served (None for anonymous reads)."""
    caller = _caller.get()
    return caller.user if caller else None


def require_user() -> User:
    """The authenticated user; the interceptor guarantees one for non-public methods."""
    user = current_user()
    if user is None:
        raise GrpcError(grpc.StatusCode.UNAUTHENTICATED, "this call needs an API token")
    return user


def parse_rate(rate: str | None) -> tuple[int, int] | None:
    """'600/min' -> (600, 60); empty or '0' -> None (no throttle)."""
    if not rate or rate.strip() in {"0", "off", "none"}:
        return None
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d*)\s*([a-z]+)\s*", rate.lower())
    if not m or m.group(3) not in _PERIODS:
        raise ValueError(f"rate must look like 600/min, not {rate!r}")
    return int(m.group(1)), int(m.group(2) or 1) * _PERIODS[m.group(3)]


def _status_for(exc: app.ApplicationError) -> grpc.StatusCode:
    if isinstance(exc, app.NotFound):
        return grpc.StatusCode.NOT_FOUND
    if isinstance(exc, app.PermissionDenied):
        return grpc.StatusCode.PERMISSION_DENIED
    if isinstance(exc, app.Conflict):
        return grpc.StatusCode.FAILED_PRECONDITION
    return grpc.StatusCode.INVALID_ARGUMENT


def _bearer(metadata: Any) -> str | None:
    """The token of ``authorization: Bearer <token>``; '' when malformed, None when absent."""
    for key, value in metadata or ():
        if key.lower() == "authorization":
            text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
            scheme, _, token = text.strip().partition(" ")
            return token.strip() if scheme.lower() == "bearer" else ""
    return None


def _peer_host(peer: str) -> str:
    """'ipv4:127.0.0.1:5555' -> 'ipv4:127.0.0.1' (the port changes per connection)."""
    if peer.startswith("ipv6:"):
        return peer.rsplit("]", 1)[0] + "]" if "]" in peer else peer
    return peer.rsplit(":", 1)[0] if peer.count(":") >= 2 else peer


class CallGuard(grpc.ServerInterceptor):
    """Authentication, throttling, DB hygiene and error mapping for Ladder methods."""

    def __init__(self, *, rate: str | None = None) -> None:
        self.rate = parse_rate(rate if rate is not None else settings.LADDER_GRPC_THROTTLE)

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        handler = continuation(handler_call_details)
        method = handler_call_details.method  # type: ignore[attr-defined]
        if handler is None or not method.startswith(SERVICE_PREFIX):
            return handler
        name = method[len(SERVICE_PREFIX) :]
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._unary(name, handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream is not None:
            return grpc.unary_stream_rpc_method_handler(
                self._stream(name, handler.unary_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler  # the Ladder service has no client-streaming methods

    # --- per call -------------------------------------------------------------

    def _admit(self, name: str, context: grpc.ServicerContext) -> Caller:
        """Authenticate and throttle; raise GrpcError to refuse."""
        secret = _bearer(context.invocation_metadata())
        user: User | None = None
        if secret is not None:
            token = token_authenticate(secret=secret) if secret else None
            if token is None:
                raise GrpcError(
                    grpc.StatusCode.UNAUTHENTICATED,
                    "invalid or revoked API token (send 'authorization: Bearer <token>')",
                )
            user = token.user
        elif name not in PUBLIC_METHODS:
            raise GrpcError(
                grpc.StatusCode.UNAUTHENTICATED,
                f"{name} needs an API token in metadata 'authorization: Bearer <token>'",
            )
        key = f"user:{user.pk}" if user is not None else f"anon:{_peer_host(context.peer())}"
        self._throttle(key)
        return Caller(user=user, throttle_key=key)

    def _throttle(self, key: str) -> None:
        if self.rate is None:
            return
        limit, period = self.rate
        window = int(time.time() // period)
        cache_key = f"ladder-grpc-rate:{key}:{window}"
        cache.add(cache_key, 0, timeout=period + 1)
        try:
            count = cache.incr(cache_key)
        except ValueError:  # expired between add and incr: a fresh window
            cache.add(cache_key, 1, timeout=period + 1)
            count = 1
        if count > limit:
            retry = period - (time.time() % period)
            raise GrpcError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"rate limit of {limit} calls per {period} s exceeded; retry in {retry:.0f} s",
            )

    @staticmethod
    def _abort(name: str, context: grpc.ServicerContext, exc: BaseException) -> None:
        """Turn any exception into a status with a message (never a traceback)."""
        if isinstance(exc, GrpcError):
            code, message = exc.code, exc.message
        elif isinstance(exc, app.ApplicationError):
            code, message = _status_for(exc), exc.message
        else:
            log.exception("%s failed unexpectedly", name)
            code, message = grpc.StatusCode.INTERNAL, f"internal error in {name}; see server log"
        log.info("%s -> %s: %s", name, code.name, message)
        context.abort(code, message[:MAX_DETAIL])

    @contextmanager
    def _call(self, name: str, context: grpc.ServicerContext) -> Iterator[None]:
        """What every call runs inside, unary or streamed: fresh database connections,
        the caller admitted and set, any failure turned into a status."""
        close_old_connections()
        token = None
        try:
            token = _caller.set(self._admit(name, context))
            yield
        except Exception as exc:
            self._abort(name, context, exc)
        finally:
            if token is not None:
                _caller.reset(token)
            close_old_connections()

    def _unary(self, name: str, behavior: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        def wrapper(request: Any, context: grpc.ServicerContext) -> Any:
            started = time.monotonic()
            with self._call(name, context):
                response = behavior(request, context)
                log.info("%s ok in %.1f ms", name, (time.monotonic() - started) * 1000)
                return response
            raise AssertionError("unreachable: context.abort raises")

        return wrapper

    def _stream(
        self, name: str, behavior: Callable[[Any, Any], Iterator[Any]]
    ) -> Callable[[Any, Any], Iterator[Any]]:
        def wrapper(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            # A generator: grpcio iterates it on the same pool thread, so the
            # caller and the connection cleanup cover the whole stream.
            with self._call(name, context):
                yield from behavior(request, context)
                log.info("%s stream done", name)

        return wrapper
