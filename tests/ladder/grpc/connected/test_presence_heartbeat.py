"""The presence heartbeat refreshes every record of a process in pipelines of
``HEARTBEAT_BATCH`` streams (what one heartbeat holds in memory stays bounded at ten
thousand streams), each owner's members in one ZADD, and still drops the members a
killed process left behind."""

from __future__ import annotations

import time
from typing import Any

import pytest

from ladder.bots import presence

pytestmark = pytest.mark.django_db


def records(n: int, *, user_id: int) -> list[presence.StreamRecord]:
    return [
        presence.StreamRecord(
            stream_id=f"hb{user_id}x{i}",
            bot_id=100 * user_id + i % 3,
            user_id=user_id,
            token_id=1,
            relay="relay:1",
            since=time.time(),
            label="t",
        )
        for i in range(n)
    ]


def test_a_heartbeat_in_batches_refreshes_every_record(monkeypatch: Any) -> None:
    monkeypatch.setattr(presence, "HEARTBEAT_BATCH", 4)
    r = presence.client()
    ours = records(11, user_id=7)  # three batches: 4, 4, 3
    stale = presence._key("user", 7)
    r.zadd(stale, {"killed-process-stream": time.time() - 1.0})
    presence.heartbeat(ours)
    assert presence.stream_counts(bot_id=700, user_id=7) == (4, 11)  # streams 0, 3, 6, 9
    assert r.zscore(stale, "killed-process-stream") is None
    assert sorted(s.stream_id for s in presence.streams_of_bot(702)) == ["hb7x2", "hb7x5", "hb7x8"]
    for record in ours:
        ttl = r.pttl(presence._key("stream", record.stream_id))
        assert 0 < ttl <= presence.TTL_S * 1000
    for bot_id in (700, 701, 702):
        assert 0 < r.pttl(presence._key("bot", bot_id)) <= presence.TTL_S * 1000
