"""A connected test bot: ``connected_bot.py --connect A[,B] --bot NAME [--think-ms N]``.

Plays random legal actions (after ``--think-ms`` of thinking, so a test can kill
it mid-match); the token comes from $DIGDOWN_TOKEN. It opens no listening port.
It logs "first decision" when it is first asked to act: its handshake is answered
by then (the SDK logs "playing seat" just before sending that answer).
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import time

from digdown import serving
from digdown.connect import connect


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--connect", required=True)
    p.add_argument("--bot", required=True)
    p.add_argument("--think-ms", type=float, default=0.0)
    p.add_argument("--version-label", default="")
    args = p.parse_args()
    serving.configure_logging("INFO")
    rng = random.Random(1)
    decided = False

    def act(_observation: object, legal: list[object]) -> int:
        nonlocal decided
        if not decided:
            decided = True
            logging.getLogger("connected_bot").info("first decision")
        if args.think_ms:
            time.sleep(args.think_ms / 1000)
        return rng.randrange(len(legal))

    return connect(
        act,
        ladder=args.connect,
        token=os.environ["DIGDOWN_TOKEN"],
        bot_name=args.bot,
        name=f"test-{args.bot}",
        version="1",
        label=f"pid {os.getpid()}",
        version_label=args.version_label,
        max_backoff_s=1.0,
    )


if __name__ == "__main__":
    raise SystemExit(main())
