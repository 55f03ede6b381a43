"""A bot whose process dies (os._exit, no cleanup) at decision number `--after`."""

from __future__ import annotations

import itertools
import os

from _common import args

from digdown.bot import serve

opts = args([("--after", int, 3)])
counter = itertools.count()


def act(observation: dict, legal: list) -> object:
    if next(counter) >= opts.after:
        os._exit(3)
    return legal[0]


serve(act, listen=opts.listen, name="crash", version="1", port_file=opts.port_file)
