"""With ``DJANGO_DEBUG=0`` a server error leaves its traceback in the log under a request id,
and the client gets that id (never the traceback). A real WSGI process, a real failure:
its database has none of the ladder's tables (a database that is down is an outage, a
503 with Retry-After: tests/ladder/outage)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from django.http import HttpResponse
from django.test import RequestFactory

from tests.support import server_errors
from tests.support.processes import start


def a_database_without_our_tables() -> str:
    """The test server's PostgreSQL maintenance database: reachable, never migrated, so every
    query of the ladder fails with "relation does not exist", a bug of the call (500)."""
    url = urlsplit(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"))
    return urlunsplit(url._replace(path="/postgres"))


def test_a_500_in_production_is_logged_with_its_traceback_and_request_id(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "test-" + "k" * 50,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
        "LADDER_VAR_DIR": str(tmp_path / "var"),
        "DATABASE_URL": a_database_without_our_tables(),
    }
    server = start(["tests/support/wsgi_server.py"], tmp_path, "wsgi", env=env)
    try:
        answers = []
        for sent in ("client-chosen-0001", "\x1b[31m bad id"):
            request = urllib.request.Request(
                f"http://{server.address}/api/v1/leaderboard/", headers={"X-Request-ID": sent}
            )
            try:
                urllib.request.urlopen(request, timeout=30)
            except urllib.error.HTTPError as err:
                answers.append((err.code, err.headers["X-Request-ID"], json.loads(err.read())))
    finally:
        server.stop()
    log = server.log()
    (code, rid, body), (code2, rid2, body2) = answers
    assert code == code2 == 500
    assert rid == body["request_id"] == "client-chosen-0001"
    assert body["error"] == "server_error" and "Traceback" not in json.dumps(body)
    # An id that does not look like one is replaced by a fresh one.
    assert rid2 == body2["request_id"] and len(rid2) == 32 and "\x1b" not in log
    assert f"ERROR django.request [{rid}]: Internal Server Error: /api/v1/leaderboard/" in log
    assert "Traceback (most recent call last)" in log and "ProgrammingError" in log
    assert f"[{rid2}]: Internal Server Error" in log


def test_the_suite_wide_guard_sees_5xx_answers() -> None:
    """tests/ladder/conftest.py fails every test whose requests got a 5xx; this is its eye."""
    guard = server_errors.ServerErrorGuard(lambda request: HttpResponse(status=503))
    before = list(server_errors.SEEN)
    guard(RequestFactory().get("/api/v1/leaderboard/?x=1"))
    assert server_errors.SEEN[len(before) :] == ["GET /api/v1/leaderboard/?x=1 -> 503"]
    server_errors.SEEN[:] = before
