"""Busy-loop: while thinking (CONFIG where=act) or from the start, never serving (where=start)."""

from probe import CONFIG, report, serve


def spin():
    while True:
        pass


if CONFIG["where"] == "start":
    report("spinning", "from the start")
    spin()


def act(observation, legal):
    spin()


serve(act)
