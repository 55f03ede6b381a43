"""LinkWatch: the referee's evidence gathered while a remote seat's answer is late.

A blackholed address (TCP to a non-routable host: no answer, no refusal) stands for a
machine cut off from this worker; a listening socket for one that is reachable."""

from __future__ import annotations

import socket
import time

from workers.runner import Referee
from workers.runner.blame import LinkWatch

# Nothing answers (IPv6 discard prefix, RFC 6666): a connect fails without a refusal.
BLACKHOLE = "[100::1]:9"


def wait_for(watch: LinkWatch, seconds: float) -> None:
    until = time.monotonic() + seconds
    while time.monotonic() < until and not watch.cut_seen:
        time.sleep(0.05)


def test_a_cut_seen_while_the_answer_is_late_is_remembered() -> None:
    watch = LinkWatch(Referee(probe_s=0.2), BLACKHOLE, ["[100::1]:10"], 0.0)
    try:
        wait_for(watch, 5.0)
    finally:
        watch.stop()
    assert watch.cut_seen  # kept after the stop: the timeout that follows is judged by it


def test_a_reachable_seat_or_witness_is_no_cut() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        up = f"127.0.0.1:{listener.getsockname()[1]}"
        for faulted, others in ((up, []), (BLACKHOLE, [up])):
            watch = LinkWatch(Referee(probe_s=0.2), faulted, others, 0.0)
            try:
                time.sleep(1.5)
            finally:
                watch.stop()
            assert not watch.cut_seen, (faulted, others)


def test_an_answer_before_the_decision_time_starts_no_check() -> None:
    watch = LinkWatch(Referee(probe_s=0.2), BLACKHOLE, [], 1.0)
    watch.stop()  # answered in time
    time.sleep(1.6)
    assert not watch.cut_seen
