"""The security limits on the production WSGI server, not only in-process.

gunicorn with ``ladder/gunicorn.conf.py`` (two worker processes, threads) serves
the ladder on loopback with ``DJANGO_DEBUG=0`` and one Redis cache for both
processes (``LADDER_CACHE_URL``, as docs/security.md asks of every deployment
with more than one process). Over real HTTP connections: wrong tokens and
passwords are limited per client address whatever process answers and whatever
``X-Forwarded-For`` says; the anonymous throttle keys on the socket's address;
every answer carries its request id, and gunicorn's access log line has the
same id.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis as redis_lib

from tests.support.processes import Proc, start_gunicorn
from tests.support.redis import RedisServer
from tests.support.web_server import collect_static, production_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]
PASSWORD = "right-horse-battery"


@pytest.fixture(scope="module")
def static_root(tmp_path_factory: pytest.TempPathFactory) -> str:
    return collect_static(tmp_path_factory.mktemp("static"))


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.kill()


@pytest.fixture
def server(
    transactional_db: Any, tmp_path: Path, settings: Any, static_root: str, redis: RedisServer
) -> Iterator[Proc]:
    env = production_env(
        media_root=settings.MEDIA_ROOT,
        static_root=static_root,
        tmp=tmp_path,
        LADDER_CACHE_URL=f"unix://{redis.socket}?db=1",
        LADDER_AUTH_FAILURES_PER_ADDRESS="8/15min",
        LADDER_AUTH_FAILURES_PER_ACCOUNT="5/15min",
        # An hour's window: nothing the test sends expires from it, however slow the machine.
        LADDER_THROTTLE_ANON="20/hour",
        LADDER_WEB_ACCESS_LOG="-",
        LADDER_LOG_LEVEL="INFO",
    )
    proc = start_gunicorn(env, tmp_path, workers=2)
    yield proc
    assert proc.stop(timeout_s=15) == 0, proc.log()[-3000:]


def get(server: Proc, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any, bytes]:
    """One request on a new connection (so both worker processes take turns)."""
    request = urllib.request.Request(f"http://{server.address}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, reply.headers, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def basic(username: str, password: str) -> dict[str, str]:
    raw = base64.b64encode(f"{username}:{password}".encode()).decode()
    return {"Authorization": f"Basic {raw}"}


def test_wrong_tokens_are_limited_per_address_across_processes(
    server: Proc, make_user: Any, token_for: Any
) -> None:
    token = token_for(make_user("holder"))
    codes = []
    for i in range(11):
        # A new X-Forwarded-For every time: not trusted (LADDER_NUM_PROXIES=0).
        headers = {"Authorization": f"Bearer ddl_wrong{i:040d}", "X-Forwarded-For": f"10.1.0.{i}"}
        codes.append(get(server, "/api/v1/tokens/", headers)[0])
    assert codes == [401] * 8 + [429] * 3, codes
    status, headers, body = get(server, "/api/v1/tokens/", {"Authorization": f"Bearer {token}"})
    assert status == 429 and 0 < int(headers["Retry-After"]) <= 900
    assert json.loads(body)["error"] == "throttled"


def test_password_guessing_is_limited_per_account(server: Proc, make_user: Any) -> None:
    make_user("alice", password=PASSWORD)
    codes = [get(server, "/api/v1/tokens/", basic("alice", f"guess-{i}"))[0] for i in range(6)]
    assert codes == [401] * 5 + [429], codes
    assert get(server, "/api/v1/tokens/", basic("alice", PASSWORD))[0] == 429


def test_the_anonymous_throttle_believes_no_header(server: Proc, redis: RedisServer) -> None:
    # The window starts empty: what the start-up probes sent is forgotten, so the count
    # below is the test's own (one window of an hour: no request leaves it meanwhile).
    redis_lib.Redis(unix_socket_path=str(redis.socket), db=1).flushdb()
    codes = [
        get(server, "/api/v1/bots/", {"X-Forwarded-For": f"203.0.113.{i}"})[0] for i in range(23)
    ]
    # 20 an hour from this address, whatever address each request claims to come from.
    assert codes == [200] * 20 + [429] * 3, codes


def test_every_answer_has_its_request_id_in_the_access_log(server: Proc) -> None:
    status, headers, _ = get(server, "/api/v1/bots/", {"X-Request-ID": "probe-request-0001"})
    assert status == 200 and headers["X-Request-ID"] == "probe-request-0001"
    status, headers, _ = get(server, "/api/v1/matches/99999/")
    made = headers["X-Request-ID"]
    assert status == 404 and len(made) == 32
    deadline = time.monotonic() + 5
    while "request_id=" + made not in server.log() and time.monotonic() < deadline:
        time.sleep(0.05)
    log = server.log()
    assert '"GET /api/v1/bots/ HTTP/1.1" 200' in log and "request_id=probe-request-0001" in log
    assert "request_id=" + made in log
    assert "Using worker: gthread" in log and log.count("Booting worker") == 2
