"""A bidirectional gRPC stream used as a sequence of request -> reply exchanges.

Protocol 2 sends a game's decisions over one stream per seat (bot.proto
``ActStream``) and its steps over one stream to the engine (engine.proto
``Play``): the same request and reply messages as the unary calls, one reply per
request, in order, without a call's set-up per decision. What unary calls had
for free is kept here:

- a deadline per exchange: grpcio's blocking stream has one deadline for the
  whole call, so a process-wide ``DeadlineKeeper`` thread cancels the stream when
  an exchange runs past its own, and the caller sees DEADLINE_EXCEEDED exactly
  as from a unary call;
- a stream that failed once (deadline, error status, closed) is not used again:
  a late reply must never be read as the answer to a later request; the caller
  opens a new stream for the next exchange.
"""

from __future__ import annotations

import heapq
import itertools
import math
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import grpc

from workers.runner.net import TransportError

_END = object()  # ends the request iterator: the stream's half-close


class Timer:
    """One armed deadline: ``disarm`` when the exchange is over; fires at most once."""

    __slots__ = ("_fire", "_lock", "armed", "fired")

    def __init__(self, fire: Callable[[], None]) -> None:
        self._fire = fire
        self._lock = threading.Lock()
        self.armed = True
        self.fired = False

    def disarm(self) -> None:
        with self._lock:
            self.armed = False

    def expire(self) -> None:
        with self._lock:
            if not self.armed:
                return
            self.armed, self.fired = False, True
            self._fire()


class DeadlineKeeper:
    """One thread per process that fires the deadlines of stream exchanges.

    Arming costs a lock and a heap push; the thread is woken only when a deadline
    earlier than the one it sleeps towards is armed (rare: deadlines are about
    equally long), and drops disarmed ones when it wakes. Started lazily and again
    in a forked child (grpcio and fork do not mix, nor do threads and fork).
    """

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._heap: list[tuple[float, int, Timer]] = []
        self._wake_at = math.inf
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, timeout_s: float, fire: Callable[[], None]) -> Timer:
        timer = Timer(fire)
        when = time.monotonic() + timeout_s
        with self._cond:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="stream-deadlines", daemon=True
                )
                self._thread.start()
            heapq.heappush(self._heap, (when, next(self._seq), timer))
            if when < self._wake_at:
                self._cond.notify()
        return timer

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                heap = self._heap
                while heap and (not heap[0][2].armed or heap[0][0] <= now):
                    _, _, timer = heapq.heappop(heap)
                    timer.expire()  # a no-op when disarmed
                self._wake_at = heap[0][0] if heap else math.inf
                self._cond.wait(None if not heap else self._wake_at - now)


KEEPER = DeadlineKeeper()


class CallStream:
    """One open stream of ``method``; ``ask`` sends a request and waits for its reply."""

    def __init__(self, method: grpc.StreamStreamMultiCallable) -> None:
        self._requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._call: Any = method(iter(self._requests.get, _END))
        self.broken = False
        self.exchanges = 0  # replies received

    def ask(self, request: Any, timeout_s: float) -> Any:
        """The reply to ``request`` within ``timeout_s``; raises ``grpc.RpcError``.

        DEADLINE_EXCEEDED when no reply came in time, UNAVAILABLE when the other side
        closed the stream, its status when it ended the stream with one. After any
        failure the stream is ``broken`` (cancelled): open a new one.
        """
        if self.broken:
            raise TransportError(grpc.StatusCode.UNAVAILABLE, "the stream is closed")
        self._requests.put(request)
        timer = KEEPER.arm(timeout_s, self._call.cancel)
        try:
            reply = next(self._call)
        except StopIteration:
            self.close()
            raise TransportError(
                grpc.StatusCode.UNAVAILABLE, "the stream was closed by the other side"
            ) from None
        except grpc.RpcError:
            self.close()
            if timer.fired:
                raise TransportError(
                    grpc.StatusCode.DEADLINE_EXCEEDED, f"no reply within {timeout_s:.3f} s"
                ) from None
            raise
        finally:
            timer.disarm()
        if timer.fired:  # the reply came, but the stream was cancelled a moment after
            self.broken = True
        self.exchanges += 1
        return reply

    def close(self, grace_s: float = 0.0) -> None:
        """End the stream: half-close, wait up to ``grace_s`` for the other side to end it
        too (so the call ends OK, not CANCELLED, in its logs and metrics; replies still
        coming are dropped), then cancel whatever is left."""
        if not self.broken:
            self.broken = True
            self._requests.put(_END)
            if grace_s > 0:
                timer = KEEPER.arm(grace_s, self._call.cancel)
                try:
                    for _ in self._call:
                        pass
                except grpc.RpcError:
                    pass
                finally:
                    timer.disarm()
        self._call.cancel()
