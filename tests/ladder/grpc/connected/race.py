"""Hellos sent at the same instant (a barrier), to one or several grpcservers: how many
streams the limits let open. Each client answers pings, so no stream closes meanwhile."""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import grpc

from digdown.v1 import ladder_pb2 as pb


class RacingClient:
    """One Play stream opened when the barrier lets it; its first answer is kept."""

    def __init__(self, address: str, token: str, bot: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.token, self.bot = token, bot
        self.outbox: queue.Queue[pb.PlayClientMessage | None] = queue.Queue()
        self.first: str | grpc.StatusCode | None = None
        self.details = ""
        self.call: Any = None

    def _requests(self) -> Iterator[pb.PlayClientMessage]:
        yield pb.PlayClientMessage(hello=pb.PlayHello(bot=self.bot, label="racing"))
        while (item := self.outbox.get()) is not None:
            yield item

    def run(self, barrier: threading.Barrier) -> None:
        grpc.channel_ready_future(self.channel).result(timeout=20)  # connected before the race
        play = self.channel.stream_stream(
            "/digdown.v1.Ladder/Play",
            request_serializer=pb.PlayClientMessage.SerializeToString,
            response_deserializer=pb.PlayServerMessage.FromString,
        )
        barrier.wait(30)
        self.call = play(self._requests(), metadata=[("authorization", f"Bearer {self.token}")])
        try:
            first = next(self.call)
            self.first = first.WhichOneof("kind")
        except grpc.RpcError as exc:
            self.first, self.details = exc.code(), exc.details() or ""
            return
        except StopIteration:
            self.first = "ended"
            return
        threading.Thread(target=self._answer_pings, daemon=True).start()

    def _answer_pings(self) -> None:
        try:
            for message in self.call:
                if message.WhichOneof("kind") == "ping":
                    self.outbox.put(pb.PlayClientMessage(pong=message.ping))
        except grpc.RpcError:
            pass

    def close(self) -> None:
        self.outbox.put(None)
        if self.call is not None:
            self.call.cancel()
        self.channel.close()


def race(hellos: Sequence[tuple[str, str, str]]) -> list[RacingClient]:
    """Open a stream for each (address, token, bot) at once; returns the clients (open)."""
    clients = [RacingClient(*h) for h in hellos]
    barrier = threading.Barrier(len(clients))
    threads = [threading.Thread(target=c.run, args=(barrier,), daemon=True) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return clients


def welcomed(clients: Sequence[RacingClient]) -> int:
    return sum(1 for c in clients if c.first == "welcome")


def refused(clients: Sequence[RacingClient]) -> list[str]:
    return [c.details for c in clients if c.first == grpc.StatusCode.RESOURCE_EXHAUSTED]
