"""A unix-socket proxy that holds every chunk for ``delay_s`` before passing it on: a
far-away server (Redis on another machine) made of a near one.

A race between two steps of a client (a count, then a write) is as wide as a round
trip to the server; this makes that round trip long enough for racing clients to
meet in it every time, so a test of an atomic step fails reliably without it.
Threads of its own (two per connection), stopped by ``close()``.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from pathlib import Path


class SlowProxy:
    def __init__(self, listen: Path, target: Path, delay_s: float) -> None:
        self.listen, self.target, self.delay_s = listen, target, delay_s
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listen.unlink(missing_ok=True)
        self._server.bind(str(listen))
        self._server.listen(64)
        self._closed = threading.Event()
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True, name="slow-proxy").start()

    @property
    def url(self) -> str:
        return f"redis+socket://{self.listen}"

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(str(self.target))
            self._sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while chunk := src.recv(65536):
                time.sleep(self.delay_s)
                dst.sendall(chunk)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._closed.set()
        self._server.close()
        for s in self._sockets:
            with contextlib.suppress(OSError):
                s.close()
        self.listen.unlink(missing_ok=True)
