"""An idle Play stream holds no asyncio task of its own: its call's coroutine reads the
bot's messages, and a writer task lives only while something is being sent.

Ten thousand idle streams live in one process, so every object each one keeps counts
(docs/connected-bots.md has the bench's memory per stream): grpc.aio's own call takes
two tasks (the handler's and the one waiting for the call's end); the stream used to
add a reader task, a future its writer waited on, and the request iterator grpc.aio
keeps for the call's life.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from digdown.v1 import ladder_pb2 as pb
from ladder.grpc.server import LadderServer
from tests.ladder.grpc.connected.test_hostile_connected import RawBot

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]

STREAMS = 6
GRPC_AIO_TASKS_PER_CALL = 2


def tasks_on(server: LadderServer) -> list[str]:
    async def names() -> list[str]:
        current = asyncio.current_task()
        return [t.get_coro().__qualname__ for t in asyncio.all_tasks() if t is not current]

    return asyncio.run_coroutine_threadsafe(names(), server.loop).result(10)


def test_an_idle_stream_holds_no_task_of_its_own() -> None:
    from ladder.accounts.models import User
    from ladder.accounts.services import token_create
    from ladder.bots.services import bot_create

    owner = User.objects.create_user(username="idler", password="idler-12345678", is_staff=True)
    token = token_create(user=owner, name="idle").secret
    names = [f"idle{i}" for i in range(STREAMS)]
    for name in names:
        bot_create(owner=owner, name=name, kind="connected")
    server = LadderServer("127.0.0.1:0", max_workers=2, rate="0")
    server.start()
    bots: list[Any] = []
    try:
        before = tasks_on(server)
        bots = [RawBot(server.address, token, name, "idle") for name in names]
        assert all(b.welcomed.wait(30) for b in bots), [b.status for b in bots if b.status]
        held = tasks_on(server)
        grown = len(held) - len(before)
        assert grown <= GRPC_AIO_TASKS_PER_CALL * STREAMS, held
        assert not [name for name in held if "PlayStream" in name], held
        # A message sent to a stream takes a writer task only while it is sent.
        for stream in server.hub.streams():
            stream.send(pb.PlayServerMessage(ping=pb.PlayPing(nonce=1)))
        for _ in range(100):
            if not [n for n in tasks_on(server) if "PlayStream" in n]:
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"writer tasks left: {tasks_on(server)}")
        assert all(b.status is None for b in bots)  # all still open
    finally:
        for b in bots:
            b.close()
        server.stop(1.0)
