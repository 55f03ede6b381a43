"""Keep N concurrent calls in flight against a server, counting how each one ended.

For the tests and the benchmark that check what a server still does (health,
reflection) while its call limit is saturated.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import grpc

StartCall = Callable[[int], grpc.Future]  # the n-th call, started (a future)


@contextmanager
def flood(start_call: StartCall, in_flight: int, drain_s: float = 60.0) -> Iterator[Counter[str]]:
    """While the block runs, ``in_flight`` calls are always outstanding; yields the counts
    by outcome ("ok" or the status code's name), which keep growing. On exit no new call
    starts and the outstanding ones are waited for (each at most ``drain_s``)."""
    outcomes: Counter[str] = Counter()
    slots = threading.Semaphore(in_flight)
    stop = threading.Event()

    def done(future: grpc.Future) -> None:
        exc = future.exception()
        outcomes["ok" if exc is None else exc.code().name] += 1
        slots.release()

    def load() -> None:
        n = 0
        while not stop.is_set():
            if slots.acquire(timeout=0.1):
                start_call(n).add_done_callback(done)
                n += 1

    loader = threading.Thread(target=load, name="flood", daemon=True)
    loader.start()
    try:
        yield outcomes
    finally:
        stop.set()
        loader.join(10)
        for _ in range(in_flight):
            slots.acquire(timeout=drain_s)
