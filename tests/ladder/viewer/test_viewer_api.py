"""The viewer's endpoints and pages: a stored match's timeline, an uploaded replay's, limits.

Replays are played on the engine's own session code and recorded through the
ladder's services, so a finished match here is finished the way the workers
finish one (result, replay file, ratings).
"""

from __future__ import annotations

import copy
import gzip
import json
import os
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import caches
from django.core.cache.backends.locmem import LocMemCache
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.matches.recording import match_record_result
from tests.ladder.conftest import make_replay
from tests.support.matches import needed
from tests.support.replays import gz, inprocess_replay

pytestmark = pytest.mark.django_db
UPLOAD = "/api/v1/replays/timeline/"


REDIS_URL = os.environ.get("LADDER_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def _clear_local_cache() -> None:
    """Forget built timelines; only ever an in-process cache (clear() on Redis is FLUSHDB)."""
    if isinstance(caches["default"], LocMemCache):
        caches["default"].clear()


@pytest.fixture(autouse=True)
def _fresh_cache() -> Any:
    _clear_local_cache()
    yield
    _clear_local_cache()


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return inprocess_replay(seed=21, seats=3, names=["amber", "basalt", "coal"])


@pytest.fixture
def bots(make_user: Any, make_bot: Any) -> list[Any]:
    owner = make_user("owner")
    return [make_bot(owner, name) for name in ("amber", "basalt", "coal")]


def finished(bots: list[Any], replay: dict[str, Any] | bytes) -> Match:
    match = match_create(bot_ids=[b.pk for b in bots], seed=21)
    data = replay if isinstance(replay, bytes) else gz(replay)
    result = replay["result"] if isinstance(replay, dict) else _result_for(len(bots))
    return match_record_result(match_id=match.pk, result=result, replay_bytes=data).match


def _result_for(n: int) -> dict[str, Any]:
    from tests.ladder.conftest import make_result

    return make_result(list(range(1, n + 1)))


def timeline_url(match: Match) -> str:
    return f"/api/v1/matches/{match.pk}/timeline/"


def test_a_finished_match_timeline(api: APIClient, bots: list[Any], doc: dict[str, Any]) -> None:
    match = finished(bots, doc)
    r = api.get(timeline_url(match))
    assert r.status_code == 200 and r["Content-Type"] == "application/json"
    body = json.loads(r.content)
    assert body["format"] == "digdown-timeline/1" and body["verification"]["ok"]
    assert body["sha256"] == match.replay_sha256
    assert len(body["decisions"]) == len(doc["decisions"]) == len(body["steps"]) - 1
    assert body["result"] == doc["result"]
    assert [s["label"] for s in body["seats"]] == [
        "amber (seat 0)",
        "basalt (seat 1)",
        "coal (seat 2)",
    ]
    # gzip for clients that take it (the same JSON), and a strong ETag.
    zipped = api.get(timeline_url(match), HTTP_ACCEPT_ENCODING="gzip, deflate")
    assert zipped["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.content) == r.content
    assert len(zipped.content) * 5 < len(r.content)
    assert api.get(timeline_url(match), HTTP_IF_NONE_MATCH=r["ETag"]).status_code == 304


def test_built_once_then_served_from_the_cache(
    api: APIClient, bots: list[Any], doc: dict[str, Any], settings: Any
) -> None:
    match = finished(bots, doc)
    first = api.get(timeline_url(match)).content
    # The file is gone, but the timeline of its recorded sha256 is already built.
    (Path(settings.MEDIA_ROOT) / match.replay.name).unlink()
    again = api.get(timeline_url(match))
    assert again.status_code == 200 and again.content == first
    _clear_local_cache()
    gone = api.get(timeline_url(match))
    assert gone.status_code == 422 and "cannot be read" in gone.json()["detail"]


def test_nothing_of_a_match_that_has_not_finished(api: APIClient, bots: list[Any]) -> None:
    match = match_create(bot_ids=[b.pk for b in bots], seed=3)
    r = api.get(timeline_url(match))
    assert r.status_code == 409 and r.json()["error"] == "conflict"
    assert "is queued" in r.json()["detail"] and "steps" not in r.json()
    page = api.get(f"/replays/matches/{match.pk}/").content.decode()
    assert "once it has finished" in page and "data-timeline-url" not in page
    from ladder.matches.claims import match_fail

    match_fail(match_id=match.pk, error="the engine went away")
    assert api.get(timeline_url(match)).status_code == 409
    page = api.get(f"/replays/matches/{match.pk}/").content.decode()
    assert "was errored: it has no replay" in page and "data-timeline-url" not in page
    assert api.get("/api/v1/matches/999999/timeline/").status_code == 404
    assert api.get("/replays/matches/999999/").status_code == 404


def test_a_stored_replay_that_is_not_a_replay(
    api: APIClient, bots: list[Any], settings: Any, doc: dict[str, Any]
) -> None:
    match = finished(bots, make_replay(1))
    r = api.get(timeline_url(match))
    assert r.status_code == 422 and r.json()["error"] == "replay_unreadable"
    assert "not a digdown-replay/1 document" in r.json()["detail"]
    # A stored file whose bytes are not the ones recorded is refused, not shown.
    other = finished(bots[:2], inprocess_replay(seed=22, seats=2))
    (Path(settings.MEDIA_ROOT) / other.replay.name).write_bytes(gz(doc))
    r = api.get(timeline_url(other))
    assert r.status_code == 422 and "does not match its recorded sha256" in r.json()["detail"]


def test_a_stored_replay_that_does_not_verify_is_shown_with_its_difference(
    api: APIClient, bots: list[Any], doc: dict[str, Any]
) -> None:
    tampered = copy.deepcopy(doc)
    tampered["events"][40]["kind"] = "DONE"
    match = finished(bots, tampered)
    body = api.get(timeline_url(match)).json()
    v = body["verification"]
    assert not v["ok"] and v["event_index"] == 40 and "event 40" in v["first_difference"]
    assert len(body["decisions"]) == v["decision"] < len(doc["decisions"])


def test_upload_a_replay_file(api: APIClient, doc: dict[str, Any]) -> None:
    data = gz(doc)
    raw = api.post(UPLOAD, data=data, content_type="application/gzip")
    assert raw.status_code == 200 and raw.json()["verification"]["ok"]
    multipart = api.post(
        UPLOAD, {"replay": SimpleUploadedFile("m.json.gz", data)}, format="multipart"
    )
    assert multipart.status_code == 200 and multipart.content == raw.content
    plain = api.post(UPLOAD, data=json.dumps(doc), content_type="application/json")
    assert plain.status_code == 200 and len(plain.json()["decisions"]) == len(doc["decisions"])
    # A logged-in browser needs no CSRF token: the endpoint reads nothing of the session.
    session = APIClient(enforce_csrf_checks=True)
    from ladder.accounts.models import User

    session.force_login(User.objects.create_user(username="viewer", password="pw-12345678"))
    assert session.post(UPLOAD, data=data, content_type="application/gzip").status_code == 200
    assert api.get(UPLOAD).status_code == 405


def test_a_tampered_upload_gets_the_verification_failure(
    api: APIClient, doc: dict[str, Any]
) -> None:
    tampered = copy.deepcopy(doc)
    d = next(i for i, x in enumerate(tampered["decisions"]) if i > 10 and "action" in x)
    tampered["decisions"][d]["action"] = {"kind": "COMMIT", "tool_id": 999}  # never legal
    r = api.post(UPLOAD, data=gz(tampered), content_type="application/gzip")
    assert r.status_code == 422
    body = r.json()
    assert body["error"] == "replay_does_not_verify"
    assert body["detail"] == body["verification"]["first_difference"]
    assert body["verification"]["decision"] == d and "cannot be re-simulated" in body["detail"]
    assert len(body["timeline"]["decisions"]) == d and len(body["timeline"]["steps"]) == d + 1


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b"", "the replay file is empty"),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff" + b"\xff" * 20, "not valid gzip"),
        (gzip.compress(b'{"format": "digdown-replay/1"', mtime=0)[:-9], "truncated"),
        (gzip.compress(b"[1, 2]", mtime=0), "a replay is a JSON object"),
        (b"<html>", "not gzip'd JSON"),
        (gz({"format": "digdown-record/1"}), "not a digdown-replay/1 document"),
    ],
)
def test_bad_uploads_get_a_clear_400(api: APIClient, payload: bytes, message: str) -> None:
    r = api.post(UPLOAD, data=payload, content_type="application/gzip")
    assert r.status_code == 400, r.content
    assert r.json()["error"] == "invalid_replay" and message in r.json()["detail"]


def test_upload_limits(api: APIClient, settings: Any, doc: dict[str, Any]) -> None:
    data = gz(doc)
    settings.LADDER_VIEWER_UPLOAD_MAX_BYTES = len(data) - 1
    r = api.post(UPLOAD, data=data, content_type="application/gzip")
    assert r.status_code == 413 and r.json()["error"] == "too_large"
    r = api.post(UPLOAD, {"replay": SimpleUploadedFile("m.json.gz", data)}, format="multipart")
    assert r.status_code == 413
    settings.LADDER_VIEWER_UPLOAD_MAX_BYTES = 4 * 1024 * 1024
    bomb = gzip.compress(b" " * (8 * 1024 * 1024))  # 8 KiB that unpack to 8 MiB
    settings.LADDER_VIEWER_JSON_MAX_BYTES = 1024 * 1024
    r = api.post(UPLOAD, data=bomb, content_type="application/gzip")
    assert r.status_code == 400 and "unpacks to more than 1048576 bytes" in r.json()["detail"]
    r = api.post(UPLOAD, {"other": SimpleUploadedFile("m.json.gz", data)}, format="multipart")
    assert r.status_code == 400 and "field 'replay'" in r.json()["detail"]


def test_the_pages(api: APIClient, bots: list[Any], doc: dict[str, Any]) -> None:
    page = api.get("/replays/").content.decode()
    assert 'data-upload-url="/api/v1/replays/timeline/"' in page
    assert "/static/viewer/viewer.js" in page and "/static/viewer/viewer.css" in page
    match = finished(bots, doc)
    page = api.get(f"/replays/matches/{match.pk}/").content.decode()
    assert f'data-timeline-url="/api/v1/matches/{match.pk}/timeline/"' in page
    panel = re.search(r'<script id="ddv-match-\d+" type="application/json">(.*?)</script>', page)
    assert panel is not None
    data = json.loads(panel.group(1))
    assert [s["bot"] for s in data["seats"]] == ["amber", "basalt", "coal"]
    assert [s["rank"] for s in data["seats"]] == doc["result"]["ranks"]
    assert all(s["rating_after"] is not None for s in data["seats"])
    assert sum(s["rating_delta"] for s in data["seats"]) == pytest.approx(0, abs=0.05)
    absolute = [src for src in re.findall(r'(?:src|href)="([^"]+)"', page) if "//" in src]
    assert absolute == [], "the viewer loads nothing from another host"


def test_schema_lists_the_timeline_endpoints(api: APIClient) -> None:
    paths = api.get("/api/schema/?format=json").json()["paths"]
    assert "get" in paths["/api/v1/matches/{match_id}/timeline/"]
    assert "post" in paths["/api/v1/replays/timeline/"]


@pytest.fixture
def redis_cache(settings: Any) -> Any:
    """The default cache on a real Redis (LADDER_CACHE_URL's backend), under a prefix of its own."""
    import redis

    client = redis.Redis.from_url(REDIS_URL, socket_timeout=5)
    try:
        reachable = bool(client.ping())
    except redis.RedisError:
        reachable = False
    needed(f"Redis at {REDIS_URL}", reachable)
    prefix = f"viewer-test-{uuid.uuid4().hex}"
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": prefix,
        }
    }
    yield client, prefix
    for key in client.scan_iter(f"{prefix}:*"):  # never clear(): the database may be shared
        client.delete(key)
    client.close()


def test_timelines_are_shared_through_redis(
    api: APIClient, bots: list[Any], doc: dict[str, Any], settings: Any, redis_cache: Any
) -> None:
    client, prefix = redis_cache
    match = finished(bots, doc)
    first = api.get(timeline_url(match), HTTP_ACCEPT_ENCODING="gzip")
    assert first.status_code == 200
    keys = [k.decode() for k in client.scan_iter(f"{prefix}:*")]
    stored = [k for k in keys if match.replay_sha256 in k]
    assert len(stored) == 1, keys
    assert client.strlen(stored[0]) < len(gzip.decompress(first.content)) / 5  # kept gzip'd
    (Path(settings.MEDIA_ROOT) / match.replay.name).unlink()
    again = api.get(timeline_url(match), HTTP_ACCEPT_ENCODING="gzip")
    assert again.status_code == 200 and again.content == first.content


def test_uploads_have_a_rate_limit_of_their_own(
    api: APIClient, settings: Any, doc: dict[str, Any]
) -> None:
    settings.LADDER_VIEWER_UPLOAD_RATE = "2/min"
    data = gz(doc)
    codes = [
        api.post(UPLOAD, data=data, content_type="application/gzip").status_code for _ in range(3)
    ]
    assert codes == [200, 200, 429]
    assert api.get("/replays/").status_code == 200  # pages and other endpoints are not held up
