"""The pytest-django test database, as a DATABASE_URL for subprocesses (servers, workers).

A subprocess cannot see data inside a test's transaction, so tests that start
one use ``django_db(transaction=True)`` and hand it this URL: the file-based
SQLite test database by default (never an in-memory one: each process would get its own), or the
PostgreSQL test database when DATABASE_URL says so.
"""

from __future__ import annotations

from pathlib import Path

from django.db import connection


def database_url() -> str:
    s = connection.settings_dict
    if connection.vendor == "sqlite":
        name = str(s["NAME"])
        assert name and ":memory:" not in name and "mode=memory" not in name, (
            f"subprocesses need a file database, got {name}"
        )
        return f"sqlite:///{Path(name).resolve()}"
    assert connection.vendor == "postgresql", connection.vendor
    auth = s["USER"] + (f":{s['PASSWORD']}" if s.get("PASSWORD") else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
