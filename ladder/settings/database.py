"""The database: PostgreSQL from ``DATABASE_URL``, else SQLite under ``var/``; deadlines on both."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import dj_database_url

from ladder.settings.core import VAR_DIR
from ladder.settings.environment import Environment

env = Environment("database")

_url = env.text(
    "DATABASE_URL",
    f"sqlite:///{VAR_DIR / 'ladder.sqlite3'}",
    shown="sqlite:///var/ladder.sqlite3",
    why="the database; PostgreSQL in production (postgres://user:password@host:port/name)",
)
SQLITE_TIMEOUT = env.integer(
    "LADDER_SQLITE_TIMEOUT", 20, unit="s", why="SQLite's busy timeout: how long a writer waits"
)
DATABASES = {
    "default": dj_database_url.parse(
        _url,
        # Long-running services want it: a new PostgreSQL connection costs more than
        # most reads. Checked before reuse, so a dropped connection is replaced.
        conn_max_age=env.integer(
            "LADDER_DB_CONN_MAX_AGE",
            0,
            unit="s",
            why="how long a connection is reused (0: one per request; compose sets 60, "
            "as a new PostgreSQL connection costs more than a read)",
        ),
        conn_health_checks=True,
    )
}
_test_sqlite = env.text(
    "LADDER_SQLITE_TEST_NAME",
    str(Path(tempfile.gettempdir()) / f"digdown-ladder-test-{os.getpid()}.sqlite3"),
    shown="(a file per test run)",
    why="the SQLite test database (a file, so the processes a test starts see it)",
)
_test_pg = env.text(
    "LADDER_TEST_DB_NAME",
    f"test_{DATABASES['default']['NAME']}_{os.getpid()}",
    shown="(one per test run)",
    why="the PostgreSQL test database, one per run so concurrent runs do not collide",
)
_jit = env.flag(
    "LADDER_DB_JIT",
    False,
    why="PostgreSQL's JIT for this process's queries: off, as a plan over jit_above_cost "
    "spent 10-30 ms compiling what runs in 1 ms (docs/web.md)",
)
_connect_timeout = env.integer(
    "LADDER_DB_CONNECT_TIMEOUT", 5, unit="s", why="a connection to PostgreSQL is made within"
)
_tcp_user_timeout = env.integer(
    "LADDER_DB_TCP_USER_TIMEOUT_MS",
    30000,
    unit="ms",
    why="a socket whose sent data goes unacknowledged this long is dropped (a cut link "
    "fails the call in seconds, not the kernel's 15 minutes)",
)
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # SQLite: BEGIN IMMEDIATE takes the write lock up front, so the busy timeout applies
    # instead of failing at once on a read→write upgrade; WAL lets readers run alongside.
    DATABASES["default"]["OPTIONS"] = {
        "transaction_mode": "IMMEDIATE",
        "timeout": SQLITE_TIMEOUT,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    DATABASES["default"]["TEST"] = {"NAME": _test_sqlite}
    VAR_DIR.mkdir(parents=True, exist_ok=True)
else:
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    if not _jit:
        # Every query of the ladder reads a page of rows through indexes, but a LIMIT over
        # a nested loop is estimated at its full cost, above ``jit_above_cost``; the server
        # then compiled 30 functions (10-30 ms) for a query that runs in about 1 ms.
        _options["options"] = f"{_options.get('options', '')} -c jit=off".strip()
    # Deadlines on the connection itself: a server that stops answering (a cut link drops
    # packets, no reset) would otherwise hold a connect for minutes and a query until the
    # kernel gives up on the socket. A query that runs long without sending is not cut:
    # the server acknowledges what it received.
    _options.setdefault("connect_timeout", _connect_timeout)
    _options.setdefault("tcp_user_timeout", _tcp_user_timeout)
    _options.setdefault("keepalives", 1)
    _options.setdefault("keepalives_idle", 10)
    _options.setdefault("keepalives_interval", 5)
    _options.setdefault("keepalives_count", 3)
    DATABASES["default"]["TEST"] = {"NAME": _test_pg}
