"""The ladder's PostgreSQL connections carry their own deadlines: a server that accepts the
connection and then says nothing (what a cut link looks like: no reset, no answer) fails the
connect with an error within ``connect_timeout`` instead of holding the caller for minutes."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.db import connection


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP port that accepts connections and never answers."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for s in held:
        s.close()
    server.close()


def test_a_silent_server_fails_the_connect_within_its_deadline(silent_server: int) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("libpq's deadlines are PostgreSQL's")
    import psycopg

    options: dict[str, Any] = dict(settings.DATABASES["default"]["OPTIONS"])
    assert options["connect_timeout"] > 0 and options["tcp_user_timeout"] > 0
    options["connect_timeout"] = 2
    options.pop("options", None)
    # Without a deadline libpq waits on the silent server for ever (the test's own timeout
    # then fails it); with one, the connect ends in an error.
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(host="127.0.0.1", port=silent_server, dbname="ladder", user="x", **options)


@pytest.mark.django_db
def test_the_ladder_connects_with_its_deadlines() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("libpq's deadlines are PostgreSQL's")
    with connection.cursor() as cur:
        cur.execute("SELECT 1")
    params = connection.connection.info.get_parameters()
    wanted = settings.DATABASES["default"]["OPTIONS"]["connect_timeout"]
    assert params["connect_timeout"] == str(wanted)
    assert params["keepalives"] == "1" and int(params["tcp_user_timeout"]) > 0
