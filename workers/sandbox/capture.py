"""A hosted seat's stdout+stderr, kept to a fixed size however much the bot writes.

The pipe is always drained (past the cap at a bounded rate, so a flood costs
the worker little and the flooding bot waits on its own pipe), but only the
first three quarters of the cap and the last quarter are kept: the start (how it came
up) and the end (the traceback it died with) are what its owner needs. What was
dropped is said in the log itself.
"""

from __future__ import annotations

import threading
import time
from typing import IO

CHUNK = 64 * 1024
FLOOD_PAUSE_S = 0.01  # at most CHUNK per pause once over the cap (~6 MB/s)


class CappedLog:
    """Bytes written by one process, capped at ``cap`` bytes (head and tail kept)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._head_cap = cap * 3 // 4
        self._tail_cap = cap - self._head_cap
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0
        self._notes: list[str] = []
        self._lock = threading.Lock()
        self._reader: threading.Thread | None = None

    def write(self, data: bytes) -> None:
        with self._lock:
            self.total += len(data)
            room = self._head_cap - len(self._head)
            if room > 0:
                self._head += data[:room]
                data = data[room:]
            if data:
                self._tail += data
                del self._tail[: max(0, len(self._tail) - self._tail_cap)]

    def note(self, line: str) -> None:
        """A line of the launcher's own (start-up time, limits hit, how it ended)."""
        with self._lock:
            self._notes.append(f"[sandbox] {line}")

    @property
    def truncated(self) -> bool:
        return self.total > len(self._head) + len(self._tail)

    def drain(self, stream: IO[bytes]) -> None:
        """Read ``stream`` to its end on a daemon thread (see ``join``)."""

        def pump() -> None:
            try:
                while chunk := stream.read1(CHUNK):  # type: ignore[attr-defined]
                    self.write(chunk)
                    if self.total > self.cap:
                        # Past the cap only the tail is kept: a flood is read at a bounded
                        # rate (the bot waits on its pipe) instead of costing the worker a core.
                        time.sleep(FLOOD_PAUSE_S)
            except (OSError, ValueError):
                pass

        self._reader = threading.Thread(target=pump, name="sandbox-log", daemon=True)
        self._reader.start()

    def join(self, timeout_s: float) -> None:
        if self._reader is not None:
            self._reader.join(timeout_s)

    def getvalue(self) -> bytes:
        """The kept output, a marker where bytes were dropped, then the launcher's notes."""
        with self._lock:
            body = bytes(self._head)
            dropped = self.total - len(self._head) - len(self._tail)
            if dropped > 0:
                body += (
                    f"\n[sandbox] ... {dropped} bytes of output omitted: the log keeps "
                    f"{self.cap} bytes per seat (the first {self._head_cap} and the last "
                    f"{self._tail_cap}) ...\n".encode()
                )
            body += bytes(self._tail)
            if body and not body.endswith(b"\n"):
                body += b"\n"
            return body + b"".join(n.encode() + b"\n" for n in self._notes)
