"""Shared by the hostile test bots (uploaded next to each as `probe.py`).

Every attempt is reported on stderr as one line, `PROBE <name>: failed ...` or
`PROBE <name>: SUCCEEDED ...`, so the test reads from the seat's captured log
what the bot managed to do inside the sandbox. `config.json` (written by the
test into the same upload) says what to aim at: host paths, ports, pids.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "config.json")) as fh:
    CONFIG = json.load(fh)


def report(name, outcome):
    line = f"PROBE {name}: {outcome}".replace("\n", "\\n")
    sys.stderr.write(line[:4000] + "\n")
    sys.stderr.flush()


def attempt(name, fn):
    """Run one hostile attempt; what it returned means it worked."""
    try:
        result = fn()
    except BaseException as exc:  # MemoryError, OSError, SystemExit of a child...
        report(name, f"failed {type(exc).__name__}: {exc}")
        return None
    report(name, f"SUCCEEDED {result!r}")
    return result


def serve(act=None):
    """Serve the bot protocol where the sandbox says (`--listen unix:...`)."""
    from digdown.bot import parse_args
    from digdown.bot import serve as sdk_serve

    args = parse_args(None, "hostile test bot")
    sdk_serve(act or (lambda observation, legal: 0), listen=args.listen, name="hostile")
