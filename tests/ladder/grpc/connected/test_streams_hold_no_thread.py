"""A grpcserver holds idle Play streams without a thread each: many streams open, the
server process's threads stay within its bounded pool, and unary calls still answer.

(The thread-per-stream server parked two threads per stream: 128 streams took 256.)
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from digdown.v1 import ladder_pb2 as pb
from tests.ladder.grpc.connected.test_connected_play import create_connected, ladder_stub
from tests.ladder.grpc.connected.test_hostile_connected import RawBot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]

USERS, BOTS, STREAMS = 8, 4, 4  # within the default limits: 4 a bot, 16 a user


def threads_of(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def test_idle_streams_take_no_thread_each(server_a: Any, user_token: Any) -> None:
    stub = ladder_stub(server_a.address)
    owners = []
    for u in range(USERS):
        _, token = user_token(f"many{u}")
        names = [f"idle{u}x{b}" for b in range(BOTS)]
        create_connected(stub, token, *names)
        owners.append((token, names))
    before = threads_of(server_a.pid)
    bots = [
        RawBot(server_a.address, token, name, "idle")
        for token, names in owners
        for name in names
        for _ in range(STREAMS)
    ]
    try:
        assert all(b.welcomed.wait(60) for b in bots), [b.status for b in bots if b.status]
        grown = threads_of(server_a.pid) - before
        # The pool may grow, up to --max-concurrent-rpcs + 4 = 68 threads in all (fewer
        # than the streams) during the burst of logins; never by a thread per stream.
        assert grown < len(bots), f"{grown} threads more for {len(bots)} streams"
        assert stub.Leaderboard(pb.LeaderboardRequest(page_size=1), timeout=10) is not None
        assert all(b.status is None for b in bots)  # all still open
    finally:
        for b in bots:
            b.close()
