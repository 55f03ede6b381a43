"""Not a gRPC server at all: accepts every TCP connection and closes it at once.

The port stays open, so the runner sees UNAVAILABLE while something still
listens: a fault each time (not a dead bot), and the third fault forfeits.
"""

from __future__ import annotations

import signal
import socket
import sys

from _common import args, write_port

opts = args([])
host, _, port = opts.listen.rpartition(":")
sock = socket.socket()
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.bind((host, int(port)))
sock.listen(16)
sock.settimeout(0.5)
write_port(opts.port_file, sock.getsockname()[1])
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
while True:
    try:
        conn, _ = sock.accept()
    except TimeoutError:
        continue
    conn.close()
