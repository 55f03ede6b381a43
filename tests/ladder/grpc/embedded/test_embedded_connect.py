"""``make run``'s ladder (SQLite, the embedded broker, no Redis) plays connected bots.

Presence is in the database when no Redis is configured (``ladder.bots.presence``),
so the one-command install needs no other server. The bots run in another network
namespace (a machine elsewhere: it reaches the ladder only at a real address, never
at 127.0.0.1) and play rated matches through the grpcserver and a worker. Where
namespaces cannot be made (not root), the bots run here and reach the grpcserver at
a non-loopback address of this machine instead.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from digdown.v1 import ladder_pb2 as pb
from digdown.v1 import ladder_pb2_grpc
from tests.ladder.grpc.conftest import LADDER_SERVICE, bearer, manage
from tests.ladder.grpc.connected.conftest import BOT_SCRIPT, BotProcess, wait_connected
from tests.support.netns_pair import NetnsPair, NetnsUnavailable
from tests.support.processes import ROOT, Proc, start
from tests.support.workers import Worker, start_worker, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]
T = 10.0


def outward_address() -> str | None:
    """A non-loopback IPv4 address of this machine (None when it has none)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # sends nothing: picks the outward route's address
        except OSError:
            return None
        found = str(s.getsockname()[0])
    return None if found.startswith("127.") else found


@pytest.fixture(autouse=True)
def _no_redis(settings: Any) -> None:
    """This process reads presence as the embedded ladder's processes do: no Redis."""
    settings.LADDER_PRESENCE_URL = ""


@pytest.fixture(scope="module")
def elsewhere() -> Iterator[NetnsPair | None]:
    """The bots' machine: a namespace, or None (they run here, at a non-loopback address)."""
    pair = NetnsPair("emb")
    try:
        pair.open()
    except NetnsUnavailable as exc:
        pair.close()
        if outward_address() is None:
            pytest.skip(f"no namespace ({exc}) and no non-loopback address to reach")
        yield None
        return
    yield pair
    pair.close()


@pytest.fixture(scope="module")
def embedded_env(
    ladder_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """``make run``'s settings: SQLite (the tests' file database), the embedded broker, and
    no Redis anywhere (no presence, cache or broker URL)."""
    return {
        **ladder_env,
        "REDIS_URL": "",
        "LADDER_PRESENCE_URL": "",
        "LADDER_CACHE_URL": "",
        "CELERY_BROKER_URL": "",
        "LADDER_BROKER_DIR": str(tmp_path_factory.mktemp("embedded-broker")),
        "LADDER_CONNECT_PING_INTERVAL_S": "1",
        "LADDER_CONNECT_PING_TIMEOUT_S": "3",
        "LADDER_MATCH_DECISION_S": "0.5",
        "LADDER_MATCH_BANK_S": "2",
    }


@pytest.fixture(scope="module")
def embedded_grpc(
    embedded_env: dict[str, str], grpc_procdir: Path, elsewhere: NetnsPair | None
) -> Iterator[Proc]:
    host = elsewhere.host_ip if elsewhere is not None else outward_address()
    p = start(
        ["manage.py", "grpcserver", "--rate", "0", "--log-level", "INFO"], grpc_procdir,
        "embedded-grpc", health_service=LADDER_SERVICE, env=embedded_env, listen=f"{host}:0",
    )  # fmt: skip
    yield p
    p.stop()


@pytest.fixture(scope="module")
def embedded_worker(embedded_env: dict[str, str], grpc_procdir: Path) -> Iterator[Worker]:
    worker = start_worker(embedded_env, grpc_procdir, "embedded-worker")
    yield worker
    assert worker.stop() == 0, worker.log()


def start_bot_elsewhere(
    elsewhere: NetnsPair | None, env: dict[str, str], logdir: Path, name: str, token: str,
    ladder: str,
) -> BotProcess:  # fmt: skip
    log_path = logdir / f"elsewhere-{name}.log"
    prefix = elsewhere.exec_prefix() if elsewhere is not None else []
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            [*prefix, sys.executable, str(BOT_SCRIPT), "--connect", ladder, "--bot", name],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env={**env, "DIGDOWN_TOKEN": token},
        )  # fmt: skip
    return BotProcess(proc, log_path)


def test_the_embedded_ladder_plays_connected_bots_from_elsewhere(
    elsewhere: NetnsPair | None, embedded_env: dict[str, str], embedded_grpc: Proc,
    embedded_worker: Worker, user_token: Any, grpc_procdir: Path,
) -> None:  # fmt: skip
    from ladder.bots import presence
    from ladder.bots.models import Bot
    from ladder.matches.models import MatchSeat

    assert presence.backend() == "database"
    assert not embedded_grpc.address.startswith("127.")
    _, ann = user_token("ann-emb")
    _, ben = user_token("ben-emb")
    with grpc.insecure_channel(embedded_grpc.address) as channel:
        stub = ladder_pb2_grpc.LadderStub(channel)
        for name, token in (("far-ann", ann), ("far-ben", ben)):
            stub.CreateBot(
                pb.CreateBotRequest(name=name, kind="CONNECTED"), metadata=bearer(token), timeout=T
            )
    at = embedded_grpc.address
    bots = [
        start_bot_elsewhere(elsewhere, embedded_env, grpc_procdir, name, token, at)
        for name, token in (("far-ann", ann), ("far-ben", ben))
    ]
    try:
        for bot in bots:
            wait_connected(bot)
        ids = list(Bot.objects.filter(name__in=["far-ann", "far-ben"]).values_list("pk", flat=True))
        wait_until(lambda: presence.connected_bot_ids(ids) == set(ids), 15, "presence of both")
        for seed in (3, 4):
            done = manage(
                ["playmatch", "--bots", "far-ann,far-ben", "--seed", str(seed), "--timeout", "150"],
                embedded_env, timeout_s=180,
            )  # fmt: skip
            out = done.stdout + done.stderr
            assert done.returncode == 0, out + embedded_worker.log()[-3000:]
        seats = list(MatchSeat.objects.filter(bot__name__in=["far-ann", "far-ben"]))
        assert len(seats) == 4
        assert all(s.rating_after is not None for s in seats)  # rated
        assert all(not s.forfeit_reason and s.faults == 0 for s in seats), [
            (s.forfeit_reason, s.faults) for s in seats
        ]
        # The match's end reached the bot on its stream, across the namespace.
        wait_until(lambda: "finished" in bots[0].log(), 20, "a match end on the stream")
    finally:
        for bot in bots:
            bot.stop()
    # A stopped bot's presence row goes at once (a clean close), so it is offered no more.
    wait_until(lambda: not presence.connected_bot_ids(ids), 15, "the presence rows to go")


@pytest.fixture(scope="module")
def embedded_grpc_b(embedded_env: dict[str, str], grpc_procdir: Path) -> Iterator[Proc]:
    """A second grpcserver on the same database: a replica (presence rows shared)."""
    p = start(
        ["manage.py", "grpcserver", "--rate", "0", "--log-level", "INFO"], grpc_procdir,
        "embedded-grpc-b", health_service=LADDER_SERVICE, env=embedded_env,
    )  # fmt: skip
    yield p
    p.stop()


def test_racing_hellos_keep_the_limits_with_presence_in_the_database(
    embedded_grpc: Proc, embedded_grpc_b: Proc, user_token: Any
) -> None:
    """12 hellos for one bot at once over two servers open its limit (4); 24 over one
    user's bots open the user's (16): counted and recorded in one transaction."""
    from django.conf import settings

    from tests.ladder.grpc.connected.race import race, refused, welcomed

    _, uma = user_token("uma-race")
    per_bot, per_user = (
        settings.LADDER_CONNECT_STREAMS_PER_BOT,
        settings.LADDER_CONNECT_STREAMS_PER_USER,
    )
    names = ["solo", *(f"pack{i}" for i in range(per_user // (per_bot - 1) + 3))]
    with grpc.insecure_channel(embedded_grpc.address) as channel:
        stub = ladder_pb2_grpc.LadderStub(channel)
        for name in names:
            stub.CreateBot(
                pb.CreateBotRequest(name=name, kind="CONNECTED"), metadata=bearer(uma), timeout=T
            )
    servers = [embedded_grpc.address, embedded_grpc_b.address]
    clients = race([(servers[i % 2], uma, "solo") for i in range(3 * per_bot)])
    try:
        assert welcomed(clients) == per_bot, [c.first for c in clients]
        assert all(f"the limit of {per_bot}" in d for d in refused(clients))
    finally:
        for c in clients:
            c.close()
    wait_until(lambda: not _live_streams(), 15, "the solo streams' rows to go")
    hellos = [(servers[i % 2], uma, n) for n in names[1:] for i in range(per_bot - 1)]
    clients = race(hellos)
    try:
        assert welcomed(clients) == per_user, [c.first for c in clients]
        assert all(f"the limit of {per_user}" in d for d in refused(clients))
    finally:
        for c in clients:
            c.close()


def _live_streams() -> int:
    import time

    from ladder.bots.models import ConnectedStream

    return ConnectedStream.objects.filter(expires_at__gte=time.time()).count()
