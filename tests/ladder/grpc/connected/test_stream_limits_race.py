"""The stream limits hold when hellos race, across two grpcservers sharing Redis: the
count and the record are one atomic step (``presence.admit``'s Lua script). Before, 12
hellos for one bot at the same instant opened 7 streams (limit 4), and 24 over one
user's bots opened 24 (limit 16).

The two servers reach Redis through a proxy that holds every chunk 30 ms (Redis on
another machine, far away): a count and a later write would be a round trip apart,
so racing hellos meet between them every time; one atomic step does not care.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.ladder.grpc.connected.conftest import start_grpcserver
from tests.ladder.grpc.connected.race import race, refused, welcomed
from tests.ladder.grpc.connected.test_connected_play import create_connected, ladder_stub
from tests.support.slow_proxy import SlowProxy

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def far_redis(presence_redis: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    proxy = SlowProxy(
        tmp_path_factory.mktemp("far-redis") / "far.sock", presence_redis.socket, delay_s=0.03
    )
    yield proxy.url
    proxy.close()


@pytest.fixture(scope="module")
def racing_servers(
    connect_env: dict[str, str], grpc_procdir: Path, far_redis: str
) -> Iterator[list[str]]:
    env = {**connect_env, "LADDER_PRESENCE_URL": far_redis}
    servers = [start_grpcserver(env, grpc_procdir, f"connect-race-{n}") for n in "ab"]
    yield [s.address for s in servers]
    for s in servers:
        s.stop()


def test_racing_hellos_for_one_bot_open_no_more_than_its_limit(
    racing_servers: list[str], user_token: Any
) -> None:
    from django.conf import settings

    _, pia = user_token("pia-race")
    create_connected(ladder_stub(racing_servers[0]), pia, "racer")
    limit = settings.LADDER_CONNECT_STREAMS_PER_BOT
    servers = racing_servers
    clients = race([(servers[i % 2], pia, "racer") for i in range(3 * limit)])
    try:
        assert welcomed(clients) == limit, [(c.first, c.details) for c in clients]
        assert len(refused(clients)) == 2 * limit
        assert all(f"the limit of {limit}" in d for d in refused(clients))
    finally:
        for c in clients:
            c.close()


def test_racing_hellos_over_one_users_bots_open_no_more_than_the_users_limit(
    racing_servers: list[str], user_token: Any
) -> None:
    from django.conf import settings

    _, rui = user_token("rui-race")
    per_bot, per_user = (
        settings.LADDER_CONNECT_STREAMS_PER_BOT,
        settings.LADDER_CONNECT_STREAMS_PER_USER,
    )
    names = [f"herd{i}" for i in range(per_user // (per_bot - 1) + 3)]
    create_connected(ladder_stub(racing_servers[0]), rui, *names)
    servers = racing_servers
    # per_bot - 1 hellos per bot: no bot reaches its own limit, the user's is what holds.
    hellos = [(servers[i % 2], rui, name) for name in names for i in range(per_bot - 1)]
    assert len(hellos) > per_user
    clients = race(hellos)
    try:
        assert welcomed(clients) == per_user, [(c.bot, c.first, c.details) for c in clients]
        assert all(f"the limit of {per_user}" in d for d in refused(clients))
    finally:
        for c in clients:
            c.close()
