"""A fork bomb in a child, while the bot goes on serving."""

import os
import time

from probe import attempt, serve


def bomb():
    if os.fork() == 0:
        while True:
            try:
                os.fork()
            except OSError:
                time.sleep(0.001)
    return "bomb started"


attempt("fork bomb", bomb)
time.sleep(1)


def count():
    return len([p for p in os.listdir("/proc") if p.isdigit()])


attempt("processes after the bomb", count)
serve()
