"""Whose fault is a seat that stopped answering: the bot's, or the worker's own network?

A bot that does not answer in time, or whose connection breaks, is charged a
fault (three make a forfeit, and the match is rated). But a worker cut off from
the bots sees exactly the same thing from every seat at once; charging the bots
then moves ratings because of the ladder's own infrastructure. So before a
*transport* fault (a timeout, a broken connection, a handshake that never
completed) is charged, the worker gathers evidence about itself:

1. the seat itself: a fresh TCP connection to its address. Accepted, or refused
   with a reset, proves the worker reaches the bot's machine: the bot is slow,
   hung or gone, and is charged.
2. otherwise its witnesses: the other remote seats of the match, the known-good
   peers of ``controls`` (``LADDER_BLAME_CONTROLS``), and the relay of each connected
   seat of the match (the ladder server holding its bot's stream: a known-good peer
   as well, probed at the same moment, so a worker cut off from everything right
   after a connected seat answered is not vouched for). Any of them accepting or
   refusing a connection proves the worker's network works: the bot's machine is
   the one that is unreachable, and the bot is charged.
3. otherwise nothing proves the worker can reach anybody: ``WorkerCutOff``. The
   match is stopped before the fault is applied, nobody is charged, and the
   ladder releases it to be played again (on the last attempt it is errored,
   unrated) - never rated.

Seats on this machine (hosted bots on unix sockets) never need the network, so
their faults are always theirs. Faults of content (illegal, malformed, too large)
are the bot's whatever the network does and are never judged here.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from workers.runner.net import RunnerError, probe
from workers.runner.terms import TRANSPORT_FAULTS

log = logging.getLogger("workers.runner")

__all__ = [
    "TRANSPORT_FAULTS",
    "TRANSPORT_HANDSHAKES",
    "InfrastructureFault",
    "LinkWatch",
    "Referee",
    "WorkerCutOff",
]
# Handshake failures that may be the network's (the status code starts the reason).
TRANSPORT_HANDSHAKES = ("UNAVAILABLE", "DEADLINE_EXCEEDED")


class InfrastructureFault(RunnerError):
    """The ladder's own infrastructure failed a seat (this worker's network, the relay of a
    connected bot): the match is released for a retry, nobody is charged, nothing rated."""

    retryable = True


class WorkerCutOff(InfrastructureFault):
    """This worker could reach none of the bots: release the match, rate nobody."""


def _remote(address: str) -> bool:
    """Reached over the network: a dialled ``host:port`` (not a unix socket, not a seat
    with a transport of its own, which the caller passes as "")."""
    return bool(address) and not address.startswith("unix:")


@dataclass(frozen=True)
class Referee:
    """Decides, by the evidence above, whether a seat's transport fault may be charged."""

    controls: Sequence[str] = ()
    probe_s: float = 1.0

    def charge(self, faulted: str, others: Sequence[str], what: str) -> None:
        """Return when the seat at ``faulted`` may be charged for ``what``; raise
        WorkerCutOff when the worker's own connectivity is what failed. ``others``: the
        witnesses' addresses (the other seats', a connected seat's relay)."""
        if not self.cut_off(faulted, others):
            return
        witnesses = [a for a in (*others, *self.controls) if _remote(a) and a != faulted]
        log.warning(
            "no bot answers a connection (the faulted seat and %d witness(es)) after %s: "
            "this worker is cut off; nobody is charged",
            len(witnesses), what,
        )  # fmt: skip
        raise WorkerCutOff(
            f"worker cut off from the bots ({what}; neither the seat nor any of "
            f"{len(witnesses)} witness(es) accepted a connection): nobody is charged"
        )

    def cut_off(self, faulted: str, others: Sequence[str]) -> bool:
        """The evidence right now: neither the remote seat at ``faulted`` nor any witness
        answers a connection (False for a seat that is not remote)."""
        if not _remote(faulted) or probe(faulted, self.probe_s) != "unknown":
            return False
        witnesses = [a for a in (*others, *self.controls) if _remote(a) and a != faulted]
        if witnesses:
            with ThreadPoolExecutor(max_workers=min(8, len(witnesses))) as pool:
                answers = list(pool.map(lambda a: probe(a, self.probe_s), witnesses))
            if any(answer != "unknown" for answer in answers):
                return False
        return True


class LinkWatch:
    """Evidence from the moment of a fault, for a decision that takes long: while a remote
    seat's answer is awaited past its decision time, the referee's evidence is gathered
    about every half second (by one watcher thread of the process that scans the
    decisions in flight: registering one costs a dict insert, no thread, no wake-up). A
    moment when neither the seat nor any witness answered a connection is remembered
    (``cut_seen``): a timeout that spanned it is the network's, even when the network is
    back by the time the decision's deadline expires (before, the probe after the heal
    found the bot and the timeout was charged)."""

    # Connects on a LAN take milliseconds: a short probe keeps the evidence of a cut
    # within the decision's wait (the referee's own probe, after the fault, is longer).
    PROBE_S = 0.4

    def __init__(
        self, referee: Referee, faulted: str, others: Sequence[str], after_s: float
    ) -> None:
        self.referee = replace(referee, probe_s=min(referee.probe_s, self.PROBE_S))
        self.faulted, self.others = faulted, list(others)
        self.due = time.monotonic() + after_s
        self.cut_seen = False
        self.checking = False
        self.stopped = False
        self._idle = threading.Event()
        self._idle.set()
        _WATCHER.add(self)

    def check(self) -> None:
        try:
            if not self.stopped and self.referee.cut_off(self.faulted, self.others):
                self.cut_seen = True
        finally:
            self.due = time.monotonic() + 0.25
            self.checking = False
            self._idle.set()

    def start_check(self) -> None:
        self.checking = True
        self._idle.clear()

    def stop(self) -> None:
        """Stop watching; a check under way is waited for (its evidence is from the wait)."""
        self.stopped = True
        _WATCHER.remove(self)
        self._idle.wait(4 * self.PROBE_S + 1.0)


class _Watcher:
    """The one thread that starts the checks of the decisions past their time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._watches: dict[int, LinkWatch] = {}
        self._thread: threading.Thread | None = None
        self._checks: ThreadPoolExecutor | None = None

    def add(self, watch: LinkWatch) -> None:
        with self._lock:
            self._watches[id(watch)] = watch
            if self._thread is None:
                self._checks = ThreadPoolExecutor(8, thread_name_prefix="link-check")
                self._thread = threading.Thread(target=self._run, name="link-watch", daemon=True)
                self._thread.start()

    def remove(self, watch: LinkWatch) -> None:
        with self._lock:
            self._watches.pop(id(watch), None)

    def _run(self) -> None:
        while True:
            time.sleep(0.1)
            now = time.monotonic()
            with self._lock:
                due = [w for w in self._watches.values() if w.due <= now and not w.checking]
                for w in due:
                    w.start_check()
            for w in due:
                assert self._checks is not None
                self._checks.submit(w.check)


_WATCHER = _Watcher()


def _forget_watcher() -> None:
    global _WATCHER
    _WATCHER = _Watcher()


os.register_at_fork(after_in_child=_forget_watcher)
