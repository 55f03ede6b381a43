"""Flood stderr from a thread while serving."""

import sys
import threading

from probe import report, serve

LINE = b"flood " * 170 + b"\n"


def flood():
    out = sys.stderr.buffer
    while True:
        out.write(LINE * 64)


report("flooding", "stderr")
threading.Thread(target=flood, daemon=True).start()
serve()
