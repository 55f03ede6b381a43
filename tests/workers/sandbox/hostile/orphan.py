"""Spawn a daemon (double fork, new session, deaf to signals) that should outlive the bot.

With CONFIG exit_after=N the bot itself exits at its N-th decision, leaving the daemon.
"""

import os
import signal
import time

from probe import CONFIG, report, serve


def daemon():
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    report("daemon", f"pid {os.getpid()} in the sandbox")
    while True:
        time.sleep(1)


daemon()
decisions = 0


def act(observation, legal):
    global decisions
    decisions += 1
    if decisions >= CONFIG["exit_after"]:
        report("exiting", f"after {decisions} decisions, daemon left behind")
        os._exit(0)
    return 0


serve(act)
