"""Keep a claimed match's lease alive while it is played (a heartbeat thread).

A claim holds a match for ``lease_s`` seconds; the janitor requeues a running
match whose lease expired, because its worker is presumed dead. So a worker
renews the lease every quarter of it, from a thread, whatever the match loop
is doing (a bot may legitimately think for its whole bank). When a renewal
finds the claim gone (the lease expired and another worker took the match, or
it was cancelled), ``lost`` says why and the runner stops at its next
decision: two workers never keep playing the same match.
"""

from __future__ import annotations

import logging
import threading
from types import TracebackType

from django.db import DatabaseError, connection

from ladder.matches.services import match_heartbeat

log = logging.getLogger("workers.lease")


class LeaseKeeper:
    """Renews one claim (match, worker, attempt) until stopped; a context manager."""

    def __init__(self, *, match_id: int, worker: str, attempt: int, lease_s: float) -> None:
        self.match_id = match_id
        self.worker = worker
        self.attempt = attempt
        self.lease_s = lease_s
        self.reason = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{match_id}", daemon=True)

    def lost(self) -> str:
        """Why the claim is gone ("" while it holds): the runner's ``cancel`` hook."""
        return self.reason

    def _run(self) -> None:
        period = max(0.05, self.lease_s / 4)
        try:
            while not self._stop.wait(period):
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
                    continue
                if not held:
                    self.reason = "the match is no longer held by this worker (lease lost)"
                    log.warning("match %d attempt %d: %s", self.match_id, self.attempt, self.reason)
                    return
        finally:
            connection.close()  # this thread's own connection

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
