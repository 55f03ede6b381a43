"""The shared cache answers as an empty cache while Redis is away (no root needed).

A real ``redis-server`` of the test's own: the cache works, then the server is
killed, and every call answers at once as an empty cache would - reads miss,
counters count nothing (limits fail open) - with one log line, not one per call,
and the failures counted; when Redis is back (after the pause), it is used again.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ladder.common import cache as degrading
from ladder.common.ratelimit import FixedWindow
from tests.support.redis import RedisServer


def test_cache_degrades_and_recovers(
    tmp_path: Path,
    settings: object,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from django.core.cache import caches

    server = RedisServer(tmp_path)
    server.start()
    settings.CACHES = {  # type: ignore[attr-defined]
        "default": {
            "BACKEND": "ladder.common.cache.DegradingRedisCache",
            "LOCATION": f"unix://{server.socket}",
            "OPTIONS": {"socket_connect_timeout": 1.0, "socket_timeout": 1.0},
        }
    }
    monkeypatch.setattr(degrading, "_outage", degrading._Outage())
    cache = caches["default"]
    window = FixedWindow("test", limit=3, period=60)
    try:
        cache.set("k", "v")
        assert cache.get("k") == "v"
        assert window.hit("client") == 1

        server.kill()
        caplog.set_level(logging.WARNING, logger="ladder.cache")
        assert cache.get("k", "default") == "default"
        assert cache.get_many(["k"]) == {}
        assert cache.add("n", 1) is False
        assert window.hit("client") == 0  # nothing counted: the limit fails open
        assert window.count("client") == 0
        cache.set("k", "w")  # dropped, no error
        assert degrading.failures() == 1  # then the pause: Redis is not asked again
        assert degrading.degraded()
        assert len([r for r in caplog.records if "cache unavailable" in r.getMessage()]) == 1

        server.start()
        monkeypatch.setattr(degrading._outage, "down_until", 0.0)  # the pause is over
        cache.set("k", "back")
        assert cache.get("k") == "back"
    finally:
        server.kill()
