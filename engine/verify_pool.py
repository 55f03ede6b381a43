"""Replay verification on processes of its own, a bounded number at once.

Verifying a replay re-simulates a whole game and converts every stored event:
CPU-bound Python, up to a tenth of a second for a long match, and any client
may ask for many at once. Run on the engine's call threads, a flood of them
holds the interpreter lock and the CPU that health probes and the steps of
running games need: with 200 concurrent calls the engine answered too few
probes within the workers' 1 s deadline and looked dead to their pool. Here the
work goes to ``processes`` child processes (started on first use, at a lower
priority, so the engine's games come first), and at most ``admitted``
verifications are in progress or waiting for one of them; a call beyond that
is refused at once with RESOURCE_EXHAUSTED and a message, so a client knows to
come back later instead of timing out. The refusal comes before the engine's
call limit (``VerifyAdmission``, an interceptor outside ``CallLimit``), so a
flood of refused calls never takes the running slots that steps wait for; an
admitted call holds its call thread and a running slot (not the interpreter),
and ``admitted`` is kept below the engine's running slots, so steps always
find one.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Iterator

import grpc

from digdown import serving
from digdown.v1 import engine_pb2
from engine import verify

log = logging.getLogger("engine.verify_pool")

NICE = 10  # verification is background work: the engine's games come first
PARENT_CHECK_S = 1.0


def _start_child() -> None:
    """In each verification process: a lower priority, and an exit when the engine is gone
    (killed, it closes nothing: its children would wait for work for ever)."""
    with contextlib.suppress(OSError):  # a sandbox without setpriority
        os.nice(NICE)
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="engine-watch", daemon=True).start()


class VerifyPool:
    """``verify(request, timeout_s)`` on child processes, at most ``admitted`` at once."""

    def __init__(self, processes: int, admitted: int) -> None:
        self.processes = max(1, processes)
        self.admitted = max(1, admitted)
        self._slots = threading.BoundedSemaphore(self.admitted)
        self._lock = threading.Lock()
        self._executor: concurrent.futures.ProcessPoolExecutor | None = None
        self._closed = False

    def _pool(self) -> concurrent.futures.ProcessPoolExecutor:
        with self._lock:
            if self._closed:
                raise serving.StatusError(grpc.StatusCode.UNAVAILABLE, "the engine is stopping")
            if self._executor is None:
                # spawn, not fork: the engine's process runs gRPC's threads.
                self._executor = concurrent.futures.ProcessPoolExecutor(
                    max_workers=self.processes,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_child,
                )
                log.info(
                    "replay verification on %d processes, %d calls at most",
                    self.processes,
                    self.admitted,
                )
            return self._executor

    @contextlib.contextmanager
    def admission(self, context: grpc.ServicerContext) -> Iterator[None]:
        """One of the ``admitted`` places for a VerifyReplay call, or its refusal at once."""
        if not self._slots.acquire(blocking=False):
            context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"engine busy: {self.admitted} replay verifications in progress, the limit; "
                "retry later",
            )
        try:
            yield
        finally:
            self._slots.release()

    def verify(
        self, request: engine_pb2.VerifyReplayRequest, timeout_s: float | None
    ) -> engine_pb2.VerifyReplayResponse:
        """The verification's response (called admitted); StatusError when it timed out or
        its process died."""
        future = self._pool().submit(verify.verify_serialized, request.SerializeToString())
        try:
            data = future.result(timeout=timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()  # not started yet: never started; else it runs out alone
            raise serving.StatusError(
                grpc.StatusCode.DEADLINE_EXCEEDED, "the replay was not verified in time"
            ) from None
        except concurrent.futures.process.BrokenProcessPool:
            self._reset()
            raise serving.StatusError(
                grpc.StatusCode.UNAVAILABLE, "the verification process died; retry"
            ) from None
        return engine_pb2.VerifyReplayResponse.FromString(data)

    def _reset(self) -> None:
        """Forget a broken pool (a child killed): the next call starts a new one."""
        with self._lock:
            broken, self._executor = self._executor, None
        if broken is not None:
            broken.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the child processes (queued verifications are dropped)."""
        with self._lock:
            self._closed = True
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)


class VerifyAdmission(serving.HandlerInterceptor):
    """``VerifyPool.admission`` around ``method`` (the engine's VerifyReplay), placed before
    the call limit: a refused verification costs no admitted call and no running slot."""

    def __init__(self, pool: VerifyPool, method: str) -> None:
        self.pool, self.method = pool, method

    def wrap(self, method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        if method != self.method:
            return handler
        return serving.wrap_handler(handler, self.pool.admission)
