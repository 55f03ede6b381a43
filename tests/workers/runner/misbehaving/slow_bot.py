"""A bot that answers late: sleeps `--sleep` s at `--count` decisions after the first `--after`."""

from __future__ import annotations

import itertools
import time

from _common import args

from digdown.bot import serve

opts = args([("--sleep", float, 1.0), ("--after", int, 0), ("--count", int, 10**9)])
counter = itertools.count()


def act(observation: dict, legal: list) -> object:
    if opts.after <= next(counter) < opts.after + opts.count:
        time.sleep(opts.sleep)
    return legal[0]


serve(act, listen=opts.listen, name="slow", version="1", port_file=opts.port_file)
