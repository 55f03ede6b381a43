"""The embedded broker hands each message to exactly one of several concurrent consumers.

kombu's filesystem transport writes a message in place and moves it away to
read it (a copy across filesystems); ``ladder.common.broker`` publishes by
rename and claims by rename in the same folder. Four consumers race for 200
messages published while they poll: every message comes out exactly once, and
a file still being written is never read.
"""

from __future__ import annotations

import threading
from pathlib import Path

from kombu import Connection, Queue

from ladder.settings import celery_broker

N_MESSAGES = 200
N_CONSUMERS = 4


def connection(tmp: Path) -> Connection:
    url, transport, options = celery_broker({}, tmp / "broker", 1)
    return Connection(url, transport=transport, transport_options=options)


def test_each_message_to_exactly_one_consumer(tmp_path: Path) -> None:
    queue = Queue("matches", routing_key="matches")
    got: list[int] = []
    lock = threading.Lock()
    done = threading.Event()

    def consume() -> None:
        with connection(tmp_path) as conn:
            simple = conn.SimpleQueue(queue)
            while not done.is_set():
                try:
                    message = simple.get(timeout=0.05)
                except simple.Empty:
                    continue
                with lock:
                    got.append(message.payload["n"])
                message.ack()
            simple.close()

    consumers = [threading.Thread(target=consume) for _ in range(N_CONSUMERS)]
    for t in consumers:
        t.start()
    # A file half-written by a publisher: not a message yet (no final name).
    folder = tmp_path / "broker" / "queue"
    (folder / ".0_x.matches.msg.partial").write_bytes(b'{"bo')
    with connection(tmp_path) as conn:
        producer = conn.SimpleQueue(queue)
        for n in range(N_MESSAGES):
            producer.put({"n": n})
        producer.close()
    deadline = threading.Event()
    for _ in range(600):
        with lock:
            if len(got) >= N_MESSAGES:
                break
        deadline.wait(0.05)
    done.set()
    for t in consumers:
        t.join(10)
    assert sorted(got) == list(range(N_MESSAGES))
    assert [p.name for p in folder.iterdir()] == [".0_x.matches.msg.partial"]
