"""Which connected bots hold an open Play stream, and where: a presence record in Redis.

Every ``grpcserver`` process writes a record for each Play stream it holds and
refreshes it every few seconds (``heartbeat``); a record that is not refreshed
expires on its own, so a killed process's streams vanish within ``TTL_S``
without anyone cleaning up. Readers:

- the matchmaker offers a connected bot only while it has a live record
  (``connected_bot_ids``);
- a worker playing a seat of a connected bot reads the bot's streams
  (``streams_of_bot``) and calls the relay address of the process holding one;
- the bot's page shows its owner the live streams (count, since when);
- ``grpcserver`` checks the per-bot and per-user stream limits across processes.

Why Redis (already the broker and the cache) and not the database: the records
change every few seconds per stream and must expire by themselves when a
process dies; a row would need a janitor and a write per heartbeat.

Keys (all under ``LADDER_PRESENCE_PREFIX``): ``connect:bot:<id>`` and
``connect:user:<id>`` are sorted sets of stream ids scored by expiry time (the
sets themselves expire with their last stream); ``connect:stream:<id>`` is the
stream's hash (with a TTL of its own).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from django.conf import settings

from ladder.common.redis import PresenceUnavailable, client, configured, prefixed

__all__ = ["PresenceUnavailable", "StreamRecord", "client", "configured"]

log = logging.getLogger("ladder.bots.presence")

TTL_S = 6.0  # a record not refreshed for this long is gone
HEARTBEAT_S = 2.0  # how often a process refreshes its records (TTL_S / 3: two may be missed)


@dataclass(frozen=True)
class StreamRecord:
    """One open Play stream, as every process sees it."""

    stream_id: str
    bot_id: int
    user_id: int
    token_id: int
    relay: str  # the internal address of the process that holds it
    since: float  # epoch seconds
    label: str = ""


def _key(*parts: object) -> str:
    return prefixed("connect", *parts)


# --- writes (grpcserver) -------------------------------------------------------------


def stream_open(record: StreamRecord) -> None:
    """Record a new stream (live for ``TTL_S`` unless refreshed)."""
    heartbeat([record])


def heartbeat(records: Sequence[StreamRecord]) -> None:
    """Refresh every record of one process in one round trip."""
    if not records:
        return
    expires = time.time() + TTL_S
    pipe = client().pipeline(transaction=False)
    for r in records:
        key = _key("stream", r.stream_id)
        pipe.hset(key, mapping={"json": json.dumps(asdict(r))})
        pipe.pexpire(key, int(TTL_S * 1000))
        for owner in (_key("bot", r.bot_id), _key("user", r.user_id)):
            pipe.zadd(owner, {r.stream_id: expires})
            # Members of a killed process's streams expire by score: drop them here.
            pipe.zremrangebyscore(owner, "-inf", time.time())
            pipe.pexpire(owner, int(TTL_S * 1000))
    pipe.execute()


def stream_close(record: StreamRecord) -> None:
    """Forget a stream at once (a process that dies leaves it to expire)."""
    pipe = client().pipeline(transaction=False)
    pipe.delete(_key("stream", record.stream_id))
    pipe.zrem(_key("bot", record.bot_id), record.stream_id)
    pipe.zrem(_key("user", record.user_id), record.stream_id)
    pipe.execute()


# --- reads ---------------------------------------------------------------------------


def _live(ids: Iterable[bytes]) -> list[str]:
    return [i.decode() if isinstance(i, bytes) else str(i) for i in ids]


def stream_counts(*, bot_id: int, user_id: int) -> tuple[int, int]:
    """Live streams of the bot and of its owner, across every process."""
    now = time.time()
    pipe = client().pipeline(transaction=False)
    pipe.zcount(_key("bot", bot_id), now, "+inf")
    pipe.zcount(_key("user", user_id), now, "+inf")
    bot_n, user_n = pipe.execute()
    return int(bot_n), int(user_n)


def streams_of_bot(bot_id: int) -> list[StreamRecord]:
    """The bot's live streams, oldest first."""
    r = client()
    ids = _live(r.zrangebyscore(_key("bot", bot_id), time.time(), "+inf"))
    if not ids:
        return []
    pipe = r.pipeline(transaction=False)
    for sid in ids:
        pipe.hget(_key("stream", sid), "json")
    found = [StreamRecord(**json.loads(raw)) for raw in pipe.execute() if raw]
    return sorted(found, key=lambda rec: rec.since)


def connected_bot_ids(bot_ids: Iterable[int]) -> set[int]:
    """Which of ``bot_ids`` hold a live stream now (one round trip per 1000 bots)."""
    ids = list(bot_ids)
    if not ids or not configured():
        return set()
    now = time.time()
    live: set[int] = set()
    try:
        r = client()
        for start in range(0, len(ids), 1000):
            chunk = ids[start : start + 1000]
            pipe = r.pipeline(transaction=False)
            for bot_id in chunk:
                pipe.zcount(_key("bot", bot_id), now, "+inf")
            live.update(b for b, n in zip(chunk, pipe.execute(), strict=True) if n)
    except Exception as exc:  # Redis down: nobody is offered as connected meanwhile
        log.warning("presence unreadable (%s): no connected bot is offered", exc)
        return set()
    return live


def relay_key() -> str:
    """The secret every relay call carries (``x-relay-key``): derived from SECRET_KEY, which
    the workers and the grpcservers share, so a bot author who reaches a relay address
    still cannot use it."""
    import hashlib
    import hmac

    return hmac.new(settings.SECRET_KEY.encode(), b"digdown-relay/1", hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class StreamShown:
    """A stream as its owner's page shows it."""

    since_at: datetime
    label: str


def streams_shown(bot_id: int) -> list[StreamShown] | None:
    """The bot's live streams for its owner's page; None when presence cannot be read."""
    try:
        found = streams_of_bot(bot_id)
    except Exception as exc:  # no Redis configured, or unreachable: say "unknown"
        log.info("presence of bot %s unreadable: %s", bot_id, exc)
        return None
    return [StreamShown(datetime.fromtimestamp(s.since, UTC), s.label) for s in found]
