"""A PostgreSQL outage answers "come back soon": UNAVAILABLE over gRPC, 503 + Retry-After
over HTTP (like a Redis outage, which the ladder rides out), never INTERNAL / 500.

The outage is real at the socket level: the ladder's database connections go through a
TCP relay in this test (``tests.support.tcp_relay``) to the test's PostgreSQL, and the
relay is taken down (every connection reset, new ones refused: what a restart does to
clients, "server closed the connection", then "connection refused") and brought back on
the same port. The gRPC server is the production shape (``LadderServer``) on loopback.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from django.db import connection, connections

from digdown.v1 import ladder_pb2 as pb
from digdown.v1 import ladder_pb2_grpc
from ladder.grpc.server import LadderServer
from tests.support.tcp_relay import TcpRelay

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


@pytest.fixture
def relayed_db(transactional_db: Any) -> Iterator[TcpRelay]:
    if connection.vendor != "postgresql":
        pytest.skip("a database server to lose: PostgreSQL (DATABASE_URL)")
    settings = connection.settings_dict  # shared by every thread's connection
    host, port = settings["HOST"] or "127.0.0.1", int(settings["PORT"] or 5432)
    relay = TcpRelay(host, port)
    old = settings["HOST"], settings["PORT"]
    connections.close_all()
    settings["HOST"], settings["PORT"] = "127.0.0.1", str(relay.port)
    try:
        yield relay
    finally:
        relay.close()
        connections.close_all()
        settings["HOST"], settings["PORT"] = old
        # The sessions of the relayed connections end when PostgreSQL notices the reset;
        # end them now, or the test database cannot be dropped at the end of the session.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )


@pytest.mark.allow_5xx  # 503 is the answer under test
def test_rest_answers_503_with_retry_after_while_the_database_is_away(
    relayed_db: TcpRelay, client: Any
) -> None:
    assert client.get("/api/v1/leaderboard/").status_code == 200
    relayed_db.down()
    try:
        for _ in range(2):  # the connection it had is reset, then a new one is refused
            response = client.get("/api/v1/leaderboard/")
            assert response.status_code == 503, response.content[:300]
            assert int(response["Retry-After"]) > 0
            assert response.json()["error"] == "unavailable"
        page = client.get("/")
        assert page.status_code == 503 and int(page["Retry-After"]) > 0
    finally:
        relayed_db.up()
    # A server closes a broken connection at the start of the next request
    # (close_old_connections); Django's test client leaves that signal out.
    connections.close_all()
    assert client.get("/api/v1/leaderboard/").status_code == 200


def test_grpc_answers_unavailable_while_the_database_is_away(relayed_db: TcpRelay) -> None:
    server = LadderServer("127.0.0.1:0", max_workers=2, rate="0")
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = ladder_pb2_grpc.LadderStub(channel)
            stub.ListLadders(pb.ListLaddersRequest(), timeout=30)
            relayed_db.down()
            try:
                for _ in range(2):
                    with pytest.raises(grpc.RpcError) as err:
                        stub.Leaderboard(pb.LeaderboardRequest(), timeout=30)
                    assert err.value.code() == grpc.StatusCode.UNAVAILABLE, err.value.details()
                    assert "database" in err.value.details()
            finally:
                relayed_db.up()
            stub.Leaderboard(pb.LeaderboardRequest(), timeout=30)
    finally:
        server.stop(1.0)
