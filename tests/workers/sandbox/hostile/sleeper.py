"""Sleep forever: before serving (CONFIG where=start) or when asked to act (where=act)."""

import time

from probe import CONFIG, report, serve


def forever():
    while True:
        time.sleep(3600)


if CONFIG["where"] == "start":
    report("sleeping", "before serving")
    forever()


def act(observation, legal):
    forever()


serve(act)
