"""Which connected bots hold an open Play stream, and where: presence records.

Every ``grpcserver`` process writes a record for each Play stream it holds and
refreshes it every few seconds (``heartbeat``); a record that is not refreshed
expires on its own, so a killed process's streams vanish within ``TTL_S``
without anyone cleaning up. Readers:

- the matchmaker offers a connected bot only while it has a live record
  (``connected_bot_ids``);
- a worker playing a seat of a connected bot reads the bot's streams
  (``streams_of_bot``) and calls the relay address of the process holding one;
- the bot's page shows its owner the live streams (count, since when);
- ``grpcserver`` checks the per-bot and per-user stream limits across processes,
  and records a new stream in the same atomic step (``admit``), so concurrent
  hellos on any number of replicas never open more than the limits.

Two backends, chosen by configuration (``backend()``):

- **Redis** when one is configured (``LADDER_PRESENCE_URL``, else ``REDIS_URL``, else
  ``LADDER_CACHE_URL``): the way for many servers and machines. The records change
  every few seconds per stream and expire by themselves when a process dies. Keys
  (all under ``LADDER_PRESENCE_PREFIX``): ``connect:bot:<id>`` and ``connect:user:<id>``
  are sorted sets of stream ids scored by expiry time (the sets themselves expire with
  their last stream); ``connect:stream:<id>`` is the stream's hash (with a TTL of its
  own). ``admit`` is one Lua script, which Redis runs atomically.
- **The database** otherwise (``make run``'s embedded ladder: SQLite, no Redis): one
  ``ConnectedStream`` row per stream with its expiry time, refreshed in one UPDATE per
  heartbeat; expired rows are ignored by reads and deleted by the heartbeats. ``admit``
  counts and inserts in one transaction holding the owner's row lock (PostgreSQL) or
  the database's write lock (SQLite's ``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from django.conf import settings

from ladder.common.redis import PresenceUnavailable, client, prefixed
from ladder.common.redis import configured as redis_configured

__all__ = ["PresenceUnavailable", "Refused", "StreamRecord", "admit", "backend", "client"]

log = logging.getLogger("ladder.bots.presence")

TTL_S = 6.0  # a record not refreshed for this long is gone
HEARTBEAT_S = 2.0  # how often a process refreshes its records (TTL_S / 3: two may be missed)
HEARTBEAT_BATCH = 500  # records refreshed in one round trip (Redis pipeline, SQL UPDATE)


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
    version_label: str = ""  # the version its process plays (PlayHello.version_label)


@dataclass(frozen=True)
class Refused:
    """Why ``admit`` did not record a stream: which limit (``bot`` or ``user``) and the count."""

    limit: str
    open_now: int


def backend() -> str:
    """``redis`` when a Redis is configured for presence, else ``database``."""
    return "redis" if redis_configured() else "database"


def configured() -> bool:
    """Presence is always available: in Redis, or else in the database."""
    return True


def _key(*parts: object) -> str:
    return prefixed("connect", *parts)


# --- Redis ------------------------------------------------------------------------------

# KEYS: bot set, user set, stream hash. ARGV: now, expires, ttl_ms, stream id, record json,
# streams per bot, streams per user. Returns {0, 0} when recorded, {1, n} / {2, n} when the
# bot's / the user's n live streams are at the limit. Redis runs a script atomically, so two
# servers' hellos cannot both pass the count before either records.
_ADMIT_LUA = """
local now, expires, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[1])
local b = redis.call('ZCARD', KEYS[1])
if b >= tonumber(ARGV[6]) then return {1, b} end
local u = redis.call('ZCARD', KEYS[2])
if u >= tonumber(ARGV[7]) then return {2, u} end
redis.call('HSET', KEYS[3], 'json', ARGV[5])
redis.call('PEXPIRE', KEYS[3], ttl)
redis.call('ZADD', KEYS[1], expires, ARGV[4])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', KEYS[2], expires, ARGV[4])
redis.call('PEXPIRE', KEYS[2], ttl)
return {0, 0}
"""


@cache
def _admit_script(redis_client: Any) -> Any:
    return redis_client.register_script(_ADMIT_LUA)


def _redis_admit(record: StreamRecord, per_bot: int, per_user: int) -> Refused | None:
    r = client()
    now = time.time()
    keys = [_key("bot", record.bot_id), _key("user", record.user_id)]
    keys.append(_key("stream", record.stream_id))
    args = [now, now + TTL_S, int(TTL_S * 1000), record.stream_id, json.dumps(asdict(record))]
    refused, n = _admit_script(r)(keys=keys, args=[*args, per_bot, per_user])
    if int(refused) == 0:
        return None
    return Refused("bot" if int(refused) == 1 else "user", int(n))


def _redis_heartbeat(records: Sequence[StreamRecord]) -> None:
    r = client()
    ttl_ms = int(TTL_S * 1000)
    # A pipeline of HEARTBEAT_BATCH streams at a time, each owner's members in one ZADD:
    # commands queued in a pipeline are Python objects (some 24 a stream), which one
    # pipeline of every stream would hold at once, every heartbeat.
    for start in range(0, len(records), HEARTBEAT_BATCH):
        expires = time.time() + TTL_S
        owners: dict[str, dict[str, float]] = {}
        pipe = r.pipeline(transaction=False)
        for record in records[start : start + HEARTBEAT_BATCH]:
            key = _key("stream", record.stream_id)
            pipe.hset(key, mapping={"json": json.dumps(asdict(record))})
            pipe.pexpire(key, ttl_ms)
            for owner in (_key("bot", record.bot_id), _key("user", record.user_id)):
                owners.setdefault(owner, {})[record.stream_id] = expires
        now = time.time()
        for owner, members in owners.items():
            pipe.zadd(owner, members)
            # Members of a killed process's streams expire by score: drop them here.
            pipe.zremrangebyscore(owner, "-inf", now)
            pipe.pexpire(owner, ttl_ms)
        pipe.execute()


def _redis_close(record: StreamRecord) -> None:
    pipe = client().pipeline(transaction=False)
    pipe.delete(_key("stream", record.stream_id))
    pipe.zrem(_key("bot", record.bot_id), record.stream_id)
    pipe.zrem(_key("user", record.user_id), record.stream_id)
    pipe.execute()


def _redis_counts(bot_id: int, user_id: int) -> tuple[int, int]:
    now = time.time()
    pipe = client().pipeline(transaction=False)
    pipe.zcount(_key("bot", bot_id), now, "+inf")
    pipe.zcount(_key("user", user_id), now, "+inf")
    bot_n, user_n = pipe.execute()
    return int(bot_n), int(user_n)


def _redis_streams_of_bot(bot_id: int) -> list[StreamRecord]:
    r = client()
    raw_ids = r.zrangebyscore(_key("bot", bot_id), time.time(), "+inf")
    ids = [i.decode() if isinstance(i, bytes) else str(i) for i in raw_ids]
    if not ids:
        return []
    pipe = r.pipeline(transaction=False)
    for sid in ids:
        pipe.hget(_key("stream", sid), "json")
    return [_from_json(raw) for raw in pipe.execute() if raw]


_FIELDS = frozenset(StreamRecord.__dataclass_fields__)


def _from_json(raw: bytes | str) -> StreamRecord:
    """A record as any version of the servers wrote it (fields this one does not know are
    left out: servers and workers are upgraded one at a time)."""
    found = json.loads(raw)
    return StreamRecord(**{k: v for k, v in found.items() if k in _FIELDS})


def _redis_connected(ids: list[int]) -> set[int]:
    now = time.time()
    live: set[int] = set()
    r = client()
    for start in range(0, len(ids), 1000):
        chunk = ids[start : start + 1000]
        pipe = r.pipeline(transaction=False)
        for bot_id in chunk:
            pipe.zcount(_key("bot", bot_id), now, "+inf")
        live.update(b for b, n in zip(chunk, pipe.execute(), strict=True) if n)
    return live


# --- the database -----------------------------------------------------------------------


def _row(record: StreamRecord, expires: float) -> Any:
    from ladder.bots.models import ConnectedStream

    return ConnectedStream(
        stream_id=record.stream_id, bot_id=record.bot_id, user_id=record.user_id,
        token_id=record.token_id, relay=record.relay, since=record.since,
        label=record.label, version_label=record.version_label, expires_at=expires,
    )  # fmt: skip


def _record(row: Any) -> StreamRecord:
    return StreamRecord(
        stream_id=row.stream_id, bot_id=row.bot_id, user_id=row.user_id,
        token_id=row.token_id, relay=row.relay, since=row.since, label=row.label,
        version_label=row.version_label,
    )  # fmt: skip


def _db_admit(record: StreamRecord, per_bot: int, per_user: int) -> Refused | None:
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.db.models import Q

    from ladder.bots.models import ConnectedStream

    with transaction.atomic():
        # Every hello of one owner waits here for the one before it (the bot's limit is
        # within its owner's): PostgreSQL's row lock; SQLite's write lock is already held.
        list(get_user_model().objects.select_for_update().filter(pk=record.user_id).values("pk"))
        now = time.time()
        ConnectedStream.objects.filter(
            Q(bot_id=record.bot_id) | Q(user_id=record.user_id), expires_at__lt=now
        ).delete()
        live = ConnectedStream.objects.filter(expires_at__gte=now)
        bot_n = live.filter(bot_id=record.bot_id).count()
        if bot_n >= per_bot:
            return Refused("bot", bot_n)
        user_n = live.filter(user_id=record.user_id).count()
        if user_n >= per_user:
            return Refused("user", user_n)
        _row(record, now + TTL_S).save(force_insert=True)
    return None


def _db_heartbeat(records: Sequence[StreamRecord]) -> None:
    from ladder.bots.models import ConnectedStream

    now = time.time()
    ids = [r.stream_id for r in records]
    updated = 0
    for start in range(0, len(ids), HEARTBEAT_BATCH):
        batch = ids[start : start + HEARTBEAT_BATCH]
        updated += ConnectedStream.objects.filter(stream_id__in=batch).update(
            expires_at=now + TTL_S
        )
    if updated < len(ids):  # a record that expired meanwhile (a stalled process): again
        ConnectedStream.objects.bulk_create(
            [_row(r, now + TTL_S) for r in records],
            ignore_conflicts=True,
            batch_size=HEARTBEAT_BATCH,
        )
    # Rows of killed processes: nobody refreshes them.
    ConnectedStream.objects.filter(expires_at__lt=now - TTL_S).delete()


def _db_close(record: StreamRecord) -> None:
    from ladder.bots.models import ConnectedStream

    ConnectedStream.objects.filter(stream_id=record.stream_id).delete()


def _db_counts(bot_id: int, user_id: int) -> tuple[int, int]:
    from ladder.bots.models import ConnectedStream

    live = ConnectedStream.objects.filter(expires_at__gte=time.time())
    return live.filter(bot_id=bot_id).count(), live.filter(user_id=user_id).count()


def _db_streams_of_bot(bot_id: int) -> list[StreamRecord]:
    from ladder.bots.models import ConnectedStream

    rows = ConnectedStream.objects.filter(bot_id=bot_id, expires_at__gte=time.time())
    return [_record(row) for row in rows]


def _db_connected(ids: list[int]) -> set[int]:
    from ladder.bots.models import ConnectedStream

    live: set[int] = set()
    now = time.time()
    for start in range(0, len(ids), 1000):
        live.update(
            ConnectedStream.objects.filter(
                bot_id__in=ids[start : start + 1000], expires_at__gte=now
            ).values_list("bot_id", flat=True)
        )
    return live


# --- writes (grpcserver) -------------------------------------------------------------


def admit(record: StreamRecord, *, per_bot: int, per_user: int) -> Refused | None:
    """Record a new stream unless its bot or owner already holds its limit of live streams:
    the count and the record are one atomic step, across every process and machine."""
    if backend() == "redis":
        return _redis_admit(record, per_bot, per_user)
    return _db_admit(record, per_bot, per_user)


def stream_open(record: StreamRecord) -> None:
    """Record a new stream (live for ``TTL_S`` unless refreshed), with no limit check."""
    heartbeat([record])


def heartbeat(records: Sequence[StreamRecord]) -> None:
    """Refresh every record of one process, in a round trip for each HEARTBEAT_BATCH."""
    if not records:
        return
    if backend() == "redis":
        _redis_heartbeat(records)
    else:
        _db_heartbeat(records)


def stream_close(record: StreamRecord) -> None:
    """Forget a stream at once (a process that dies leaves it to expire)."""
    if backend() == "redis":
        _redis_close(record)
    else:
        _db_close(record)


# --- reads ---------------------------------------------------------------------------


def stream_counts(*, bot_id: int, user_id: int) -> tuple[int, int]:
    """Live streams of the bot and of its owner, across every process."""
    if backend() == "redis":
        return _redis_counts(bot_id, user_id)
    return _db_counts(bot_id, user_id)


def streams_of_bot(bot_id: int) -> list[StreamRecord]:
    """The bot's live streams, oldest first."""
    found = _redis_streams_of_bot(bot_id) if backend() == "redis" else _db_streams_of_bot(bot_id)
    return sorted(found, key=lambda rec: rec.since)


def connected_bot_ids(bot_ids: Iterable[int]) -> set[int]:
    """Which of ``bot_ids`` hold a live stream now (one round trip per 1000 bots)."""
    ids = list(bot_ids)
    if not ids:
        return set()
    try:
        if backend() == "redis":
            return _redis_connected(ids)
        return _db_connected(ids)
    except Exception as exc:  # presence down: nobody is offered as connected meanwhile
        log.warning("presence unreadable (%s): no connected bot is offered", exc)
        return set()


def is_connected(bot_id: int) -> bool:
    """Whether the bot holds a live stream now (False when presence cannot be read)."""
    return bot_id in connected_bot_ids([bot_id])


def absent_connected(bots: Iterable[Any]) -> list[Any]:
    """Those of ``bots`` (Bot rows) that are connected bots holding no live stream now: a
    match seating one would forfeit its seat, so nobody may ask for one (order kept)."""
    listed = list(bots)
    connected = [b for b in listed if b.kind == "connected"]
    if not connected:
        return []
    live = connected_bot_ids(b.pk for b in connected)
    return [b for b in connected if b.pk not in live]


def wait_connected(bot_id: int, timeout_s: float, poll_s: float = 0.25) -> bool:
    """Whether the bot holds a live stream within ``timeout_s`` (a worker about to seat it:
    a bot reconnecting after a server restart gets that long to come back)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if is_connected(bot_id):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(min(poll_s, max(0.0, deadline - time.monotonic())))


# Relay call metadata: when the stream the call names was opened (its record's ``since``):
# a relay process started later never held it (``ladder.grpc.relay``).
STREAM_SINCE_KEY = "x-stream-since"


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
    except Exception as exc:  # Redis unreachable: say "unknown"
        log.info("presence of bot %s unreadable: %s", bot_id, exc)
        return None
    return [StreamShown(datetime.fromtimestamp(s.since, UTC), s.label) for s in found]
