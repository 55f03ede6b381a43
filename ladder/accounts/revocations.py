"""A revoked API token's id, published so every grpcserver closes its Play streams at once.

Best effort: each grpcserver also re-checks its streams' tokens in the database
every few seconds, so a publication lost while Redis was down only delays the close.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from ladder.common.redis import client, configured, prefixed

log = logging.getLogger("ladder.accounts.revocations")


def _channel() -> str:
    return prefixed("connect", "revoked")


def publish_revoked(token_id: int) -> None:
    if not configured():
        return
    try:
        client().publish(_channel(), str(token_id))
    except Exception as exc:  # Redis down: the periodic check closes the streams later
        log.warning("could not publish revoked token %s: %s", token_id, exc)


def listen_revoked(on_token: Callable[[int], object], stop: Callable[[], bool]) -> None:
    """Call ``on_token`` with every revoked token id published, until ``stop()``; resubscribes."""
    while not stop():
        try:
            pubsub = client().pubsub(ignore_subscribe_messages=True)
            pubsub.subscribe(_channel())
            while not stop():
                message = pubsub.get_message(timeout=1.0)
                if message and message.get("type") == "message":
                    try:
                        on_token(int(message["data"]))
                    except ValueError:
                        continue
            pubsub.close()
        except Exception as exc:
            log.warning("revoked-token channel: %s; resubscribing", exc)
            time.sleep(1.0)
