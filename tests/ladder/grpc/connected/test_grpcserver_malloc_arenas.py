"""``manage.py grpcserver`` caps glibc's malloc arenas at 2 in its own process (grpc's
threads and the pool's would make one each, up to 8 a core): a real server, after
streams and unary calls on many of its threads, has at most one arena heap besides the
main one. glibc maps each extra arena's heap as a 64 MiB-aligned reservation, which is
what is counted in /proc/PID/maps."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

import pytest

from digdown.v1 import ladder_pb2 as pb
from ladder.grpc.management.commands.grpcserver import MALLOC_ARENAS
from tests.ladder.grpc.connected.test_connected_play import create_connected, ladder_stub
from tests.ladder.grpc.connected.test_hostile_connected import RawBot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

HEAP_MAX = 64 << 20  # glibc's HEAP_MAX_SIZE on 64-bit: an arena heap's reservation


def arena_heaps(pid: int) -> int:
    """Anonymous mappings that start a 64 MiB-aligned reservation: a read-write part
    followed at once by its PROT_NONE rest, 64 MiB in all."""
    maps = []
    for line in Path(f"/proc/{pid}/maps").read_text().splitlines():
        fields = line.split()
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        maps.append((lo, hi, fields[1], len(fields) > 5))
    heaps = 0
    for (lo, hi, perms, named), nxt in zip(maps, [*maps[1:], None], strict=True):
        if named or lo % HEAP_MAX or not perms.startswith("rw"):
            continue
        end = nxt[1] if nxt and nxt[0] == hi and nxt[2].startswith("---") else hi
        heaps += end - lo == HEAP_MAX
    return heaps


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc arenas")
def test_the_grpcserver_makes_at_most_two_malloc_arenas(server_a: Any, user_token: Any) -> None:
    stub = ladder_stub(server_a.address)
    _, token = user_token("arenas")
    names = [f"arena{i}" for i in range(4)]
    create_connected(stub, token, *names)
    bots = [RawBot(server_a.address, token, name, "idle") for name in names]
    try:
        assert all(b.welcomed.wait(30) for b in bots), [b.status for b in bots if b.status]
        for _ in range(40):  # unary calls on the pool's threads
            stub.Leaderboard(pb.LeaderboardRequest(page_size=5), timeout=10)
        assert arena_heaps(server_a.pid) <= MALLOC_ARENAS - 1  # the main arena is the brk heap
    finally:
        for b in bots:
            b.close()
