"""Keep a claimed match's lease alive while it is played (one heartbeat thread per process).

A claim holds a match for ``lease_s`` seconds; the janitor requeues a running
match whose lease expired, because its worker is presumed dead. So a worker
renews the lease every quarter of it, from a thread, whatever the match loop
is doing (a bot may legitimately think for its whole bank). When a renewal
finds the claim gone (the lease expired and another worker took the match, or
it was cancelled), ``lost`` says why and the runner stops at its next
decision: two workers never keep playing the same match.

The renewals of every claim the process holds are made by one thread, started
on the first claim and kept (again in a forked child): a thread started and
joined per match cost every match its start, its stop and a wake-up, though a
match of house bots is over long before its first renewal is due.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
import threading
import time
from types import TracebackType

from django.db import DatabaseError, connection

from ladder.matches.claims import match_heartbeat

log = logging.getLogger("workers.lease")


class LeaseKeeper:
    """Renews one claim (match, worker, attempt) until stopped; a context manager."""

    def __init__(self, *, match_id: int, worker: str, attempt: int, lease_s: float) -> None:
        self.match_id = match_id
        self.worker = worker
        self.attempt = attempt
        self.lease_s = lease_s
        self.reason = ""
        self.stopped = False

    def lost(self) -> str:
        """Why the claim is gone ("" while it holds): the runner's ``cancel`` hook."""
        return self.reason

    @property
    def period_s(self) -> float:
        return max(0.05, self.lease_s / 4)

    def renew(self) -> bool:
        """One renewal; False once the claim is gone (nothing more to renew)."""
        try:
            held = match_heartbeat(
                match_id=self.match_id,
                worker=self.worker,
                attempt=self.attempt,
                lease_seconds=self.lease_s,
            )
        except DatabaseError as exc:
            # The database may be back before the lease runs out; keep trying.
            log.warning("match %d: lease renewal failed: %s", self.match_id, exc)
            return True
        if not held:
            self.reason = "the match is no longer held by this worker (lease lost)"
            log.warning("match %d attempt %d: %s", self.match_id, self.attempt, self.reason)
            return False
        return True

    def __enter__(self) -> LeaseKeeper:
        HEARTBEATS.add(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        HEARTBEATS.remove(self)


class Heartbeats:
    """The process's heartbeat thread and the claims it renews, each every ``period_s``.

    ``remove`` returns at once when no renewal is under way; one under way (a
    database round trip) is waited for, so no write is made for a claim after its
    match left ``with LeaseKeeper``. The thread's database connection is closed
    after each round of renewals: renewals are seconds apart, and an idle worker
    holds no second connection.
    """

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._cond = threading.Condition()
        self._due: list[tuple[float, int, LeaseKeeper]] = []
        self._seq = itertools.count()
        self._renewing: LeaseKeeper | None = None
        self._thread: threading.Thread | None = None

    def add(self, keeper: LeaseKeeper) -> None:
        with self._cond:
            keeper.stopped = False
            heapq.heappush(self._due, (time.monotonic() + keeper.period_s, next(self._seq), keeper))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="lease", daemon=True)
                self._thread.start()
            self._cond.notify()

    def remove(self, keeper: LeaseKeeper) -> None:
        with self._cond:
            keeper.stopped = True  # dropped from the heap when it comes due
            while self._renewing is keeper:
                self._cond.wait()

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    due = self._due
                    while due and due[0][2].stopped:
                        heapq.heappop(due)
                    now = time.monotonic()
                    if due and due[0][0] <= now:
                        _, _, keeper = heapq.heappop(due)
                        self._renewing = keeper
                        break
                    self._cond.wait(due[0][0] - now if due else None)
            held = True
            try:
                held = keeper.renew()
            except Exception:  # a bug must not end the renewals of every later match
                log.exception("match %d: lease renewal failed", keeper.match_id)
            finally:
                with self._cond:
                    self._renewing = None
                    if held and not keeper.stopped:
                        heapq.heappush(
                            self._due,
                            (time.monotonic() + keeper.period_s, next(self._seq), keeper),
                        )
                    self._cond.notify_all()
                    idle = not self._due or self._due[0][0] > time.monotonic()
            if idle:
                connection.close()  # this thread's own connection, until the next round


HEARTBEATS = Heartbeats()
