"""The one interceptor every Ladder call goes through.

Why an interceptor that *wraps the handler* instead of checking metadata in
``intercept_service`` itself: grpcio calls ``intercept_service`` on its polling
thread, so a database lookup there would stall every other call. The wrapped
behaviour runs on the RPC thread pool, where it:

1. closes stale database connections before and after the call (a long-running
   server must not keep or reuse broken connections: ``close_old_connections``);
2. authenticates ``authorization: Bearer <token>`` (hashed tokens, looked up by
   digest) behind the failed-authentication limit of the client's address
   (``ladder.accounts.auth_limits``, shared with REST): an address that sent
   too many unknown tokens is refused with RESOURCE_EXHAUSTED before any
   lookup. Write calls need a token; the public reads (leaderboard, matches,
   replays) work without one, like the REST API, but a token that is sent must
   be valid;
3. throttles per token (anonymous calls per client address) with a fixed
   window in Django's cache -> RESOURCE_EXHAUSTED. The client address is the
   peer's, unless ``LADDER_NUM_PROXIES`` trusted proxies are configured (then
   the ``x-forwarded-for`` metadata they set);
4. maps service errors to status codes with their message; anything unexpected
   is logged with its traceback here and the client gets INTERNAL with a short
   message, never the traceback, and the call's request id (``x-request-id``
   trailing metadata; every log line of the call carries it).

Health and reflection are not wrapped: probes need neither a token nor the DB.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import grpc
from django.conf import settings
from django.db import close_old_connections

from digdown import serving
from ladder.accounts import auth_limits
from ladder.accounts.models import User
from ladder.common import bounded, database_outage, request_id
from ladder.common import exceptions as app
from ladder.common.metrics import THROTTLED
from ladder.common.ratelimit import FixedWindow, client_address

log = logging.getLogger("ladder.grpc")

SERVICE_PREFIX = "/digdown.v1.Ladder/"
# Reads of public data: the REST API serves them without credentials too.
PUBLIC_METHODS = frozenset(
    {
        "Leaderboard",
        "ListMatches",
        "GetMatch",
        "DownloadReplay",
        "GetRuleset",
        "ListLadders",
        "GetTournament",
        "ListCompetitions",
        "GetCompetition",
    }
)
MAX_DETAIL = 2000  # status details travel in HTTP/2 trailers: keep them small


GrpcError = serving.StatusError
"""Raised by the servicer when it wants a specific status (e.g. ALREADY_EXISTS)."""


@dataclass(frozen=True)
class Caller:
    """Who is calling: a user (token) or nobody, and the key their throttle counts under."""

    user: User | None
    throttle_key: str
    token_id: int | None = None


_caller: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("caller", default=None)


def current_user() -> User | None:
    """The authenticated user of the call being served (None for anonymous reads)."""
    caller = _caller.get()
    return caller.user if caller else None


def current_token_id() -> int | None:
    """The id of the API token the call being served came with (None for anonymous reads)."""
    caller = _caller.get()
    return caller.token_id if caller else None


def require_user() -> User:
    """The authenticated user; the interceptor guarantees one for non-public methods."""
    user = current_user()
    if user is None:
        raise GrpcError(grpc.StatusCode.UNAUTHENTICATED, "this call needs an API token")
    return user


def _status_for(exc: app.ApplicationError) -> grpc.StatusCode:
    if isinstance(exc, app.QuotaExceeded):
        return grpc.StatusCode.RESOURCE_EXHAUSTED
    if isinstance(exc, app.NotFound):
        return grpc.StatusCode.NOT_FOUND
    if isinstance(exc, app.PermissionDenied):
        return grpc.StatusCode.PERMISSION_DENIED
    if isinstance(exc, app.Conflict):
        return grpc.StatusCode.FAILED_PRECONDITION
    return grpc.StatusCode.INVALID_ARGUMENT


def _bearer(metadata: Any) -> str | None:
    """The token of ``authorization: Bearer <token>``; '' when malformed, None when absent."""
    text = _metadata(metadata, "authorization")
    if text is None:
        return None
    scheme, _, token = text.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def _metadata(metadata: Any, name: str) -> str | None:
    for key, value in metadata or ():
        if key.lower() == name:
            return value.decode("latin-1") if isinstance(value, bytes) else str(value)
    return None


def caller_address(context: grpc.ServicerContext) -> str:
    """The client's address as REST sees it too ('ipv4:10.0.0.5:5555' -> '10.0.0.5')."""
    host = serving.peer_host(context.peer())
    host = host.split(":", 1)[1] if host.startswith(("ipv4:", "ipv6:")) else host
    forwarded = _metadata(context.invocation_metadata(), "x-forwarded-for")
    return client_address(host.strip("[]"), forwarded)


def _bounded(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    """The handler with its request's text fields checked against their limits first
    (``ladder.common.bounded``): a field past its limit is INVALID_ARGUMENT before any
    query. Runs inside ``CallGuard._call`` (after authentication), so the refusal is a
    status with its message like any other."""

    def checked(request: Any) -> None:
        try:
            bounded.check_message(request)
        except bounded.FieldTooLong as exc:
            raise GrpcError(grpc.StatusCode.INVALID_ARGUMENT, str(exc)) from None

    if handler.unary_unary is not None:
        unary = handler.unary_unary

        def call(request: Any, context: grpc.ServicerContext) -> Any:
            checked(request)
            return unary(request, context)

        return grpc.unary_unary_rpc_method_handler(
            call,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        streamed = handler.unary_stream

        def stream(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
            checked(request)
            yield from streamed(request, context)

        return grpc.unary_stream_rpc_method_handler(
            stream,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
    return handler  # client streams: none but Play, served apart


class CallGuard(serving.HandlerInterceptor):
    """Authentication, throttling, DB hygiene and error mapping for Ladder methods."""

    def __init__(self, *, rate: str | None = None) -> None:
        self.rate = FixedWindow.from_rate(
            "grpc-calls", rate if rate is not None else settings.LADDER_GRPC_THROTTLE
        )

    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        if not method.startswith(SERVICE_PREFIX):
            return handler
        name = method[len(SERVICE_PREFIX) :]
        handler = _bounded(handler)  # Play is served apart (``ladder.grpc.play_call``)
        return serving.wrap_handler(handler, lambda context: self._call(name, context))

    # --- per call -------------------------------------------------------------

    def _admit(self, name: str, context: grpc.ServicerContext) -> Caller:
        """Authenticate and throttle; raise GrpcError to refuse."""
        secret = _bearer(context.invocation_metadata())
        address = caller_address(context)
        user: User | None = None
        token_id: int | None = None
        if secret is not None:
            try:
                token = auth_limits.token_authenticate_limited(secret=secret, address=address)
            except auth_limits.TooManyFailures as exc:
                THROTTLED.labels("grpc", "auth_failures").inc()
                raise GrpcError(grpc.StatusCode.RESOURCE_EXHAUSTED, exc.message) from None
            if token is None:
                raise GrpcError(
                    grpc.StatusCode.UNAUTHENTICATED,
                    "invalid or revoked API token (send 'authorization: Bearer <token>')",
                )
            user, token_id = token.user, token.pk
        elif name not in PUBLIC_METHODS:
            raise GrpcError(
                grpc.StatusCode.UNAUTHENTICATED,
                f"{name} needs an API token in metadata 'authorization: Bearer <token>'",
            )
        key = f"user:{user.pk}" if user is not None else f"anon:{address}"
        self._throttle(key)
        return Caller(user=user, throttle_key=key, token_id=token_id)

    def _throttle(self, key: str) -> None:
        if self.rate is None:
            return
        if self.rate.hit(key) > self.rate.limit:
            THROTTLED.labels("grpc", "calls").inc()
            raise GrpcError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"rate limit of {self.rate.limit} calls per {self.rate.period} s exceeded;"
                f" retry in {self.rate.retry_after()} s",
            )

    @staticmethod
    def _abort(name: str, context: grpc.ServicerContext, exc: BaseException) -> None:
        """Turn any exception into a status with a message (never a traceback)."""
        code, message = CallGuard.failure_status(name, exc)
        context.abort(code, message)

    @staticmethod
    def failure_status(name: str, exc: BaseException) -> tuple[grpc.StatusCode, str]:
        """The status and message a failure of call ``name`` ends it with (logged here)."""
        if isinstance(exc, GrpcError):
            code, message = exc.code, exc.message
        elif isinstance(exc, app.ApplicationError):
            code, message = _status_for(exc), exc.message
        elif database_outage.is_outage(exc):  # a restart, not a bug: clients retry
            log.warning("%s: database unavailable: %s", name, exc)
            code, message = grpc.StatusCode.UNAVAILABLE, database_outage.MESSAGE
        else:
            log.exception("%s failed unexpectedly", name)
            code = grpc.StatusCode.INTERNAL
            message = f"internal error in {name}; the server log has it as {request_id.current()}"
        log.info("%s -> %s: %s", name, code.name, message)
        return code, message[:MAX_DETAIL]

    def admit_stream(self, name: str, context: Any) -> Caller:
        """The admission of a stream served as a coroutine (Play), on a pool thread: fresh
        database connections around authenticating and throttling its caller."""
        close_old_connections()
        try:
            return self._admit(name, context)
        finally:
            close_old_connections()

    @contextmanager
    def _call(self, name: str, context: grpc.ServicerContext) -> Iterator[None]:
        """What every call runs inside, unary or streamed (grpcio iterates a stream on the
        call's own thread): its request id (in its log lines and the trailing metadata),
        fresh database connections, the caller admitted and set, any failure turned into
        a status."""
        rid = request_id.accept(_metadata(context.invocation_metadata(), "x-request-id"))
        context.set_trailing_metadata((("x-request-id", rid),))
        close_old_connections()
        started = time.monotonic()
        token = None
        with request_id.bound(rid):
            try:
                token = _caller.set(self._admit(name, context))
                yield
                log.info("%s ok in %.1f ms", name, (time.monotonic() - started) * 1000)
            except Exception as exc:
                self._abort(name, context, exc)
            finally:
                if token is not None:
                    _caller.reset(token)
                close_old_connections()
