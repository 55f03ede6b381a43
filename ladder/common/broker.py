"""The embedded broker: Celery messages as files in one directory, no server needed.

The default when neither CELERY_BROKER_URL nor REDIS_URL is set, so a fresh
checkout runs real ``celery worker`` processes on the same task code as
production. It is kombu's filesystem transport with two fixes that make it
safe for several consumers:

- a message is written under a temporary name and renamed into place, so a
  consumer never reads a half-written file (kombu writes in place, and a
  consumer that reads an empty payload stops with a decoding error);
- a consumer takes a message by renaming it inside the same directory (an
  atomic claim: exactly one consumer wins), then reads and deletes it. kombu
  moves it to the temp directory instead, which is a copy when that is another
  filesystem (two consumers can then both read it).

It has no acknowledgements a crash could honour: a message taken by a worker
that dies is gone, which the janitor repairs (``docs/workers.md``), as it does
for a Redis that restarts without persistence.

It also declares itself asynchronous and polls from the worker's event loop
(a repeating timer), so Celery runs the same event loop and pool (AsynPool)
as with Redis. With a synchronous transport Celery falls back to billiard's
plain pool, whose idle children wait for work holding a shared lock: one idle
child killed (OOM, ``kill -9``) leaves the lock held and the worker stuck.

Both the ladder (which enqueues) and the workers (which consume) import this
through Django settings (``CELERY_BROKER_TRANSPORT``); it lives here because
the dependency between the two points one way only.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from contextlib import suppress
from typing import Any

from kombu.transport import filesystem
from kombu.utils.json import dumps, loads

TAKEN = ".taken"


class Channel(filesystem.Channel):
    """kombu's filesystem channel with atomic publish and an atomic claim per message."""

    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:  # type: ignore[override]
        name = f"{time.monotonic() * 1000:015.0f}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.partial")
        try:
            with open(partial, "wb") as f:
                f.write(dumps(payload).encode())
            os.replace(partial, final)
        except OSError as exc:
            raise filesystem.ChannelError(f"cannot add {name!r} to {self.data_folder_out}") from exc

    def _get(self, queue: str) -> Any:  # type: ignore[override]
        suffix = f".{queue}.msg"
        folder = self.data_folder_in
        for name in sorted(os.listdir(folder)):
            if name.startswith(".") or not name.endswith(suffix):
                continue
            source = os.path.join(folder, name)
            taken = os.path.join(folder, f".{name}.{os.getpid()}{TAKEN}")
            try:
                os.rename(source, taken)  # only one consumer can win this
            except OSError:
                continue  # another consumer took it first
            try:
                with open(taken, "rb") as f:
                    payload = f.read()
            finally:
                os.unlink(taken)
            return loads(payload)
        raise filesystem.Empty()

    def _size(self, queue: str) -> int:
        suffix = f".{queue}.msg"
        names = os.listdir(self.data_folder_in)
        return sum(1 for n in names if n.endswith(suffix) and not n.startswith("."))


class Transport(filesystem.Transport):
    """The embedded transport (``CELERY_BROKER_TRANSPORT = "ladder.common.broker:Transport"``)."""

    Channel = Channel
    implements = filesystem.Transport.implements.extend(asynchronous=True)

    def register_with_event_loop(self, connection: Any, loop: Any) -> None:
        """Poll the queue folder from the worker's event loop (there is no socket to watch)."""
        loop.call_repeatedly(self.polling_interval or 0.2, self._poll, connection)

    def _poll(self, connection: Any, batch: int = 64) -> None:
        """Take what is waiting, up to what the consumers may hold (prefetch); then return."""
        with suppress(socket.timeout):
            for _ in range(batch):
                self.drain_events(connection, timeout=0)
