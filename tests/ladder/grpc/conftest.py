"""Real processes for the Ladder gRPC tests: ``manage.py grpcserver`` on the test database.

A subprocess cannot see data inside a test's transaction, so these tests use
``django_db(transaction=True)`` (committed rows, flushed afterwards) and hand the
subprocesses the test database through DATABASE_URL: the file-based SQLite test
database by default, or the PostgreSQL test database when DATABASE_URL says so.
Every process binds port 0 and reports it through a file; every wait is
bounded; every process is stopped through its own handle.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from digdown.v1 import ladder_pb2_grpc

# The ladder tests' fixtures (isolated media and settings, users, bots) serve here too.
from tests.ladder.conftest import _ladder_settings, make_bot, make_user  # noqa: F401
from tests.support.database import database_url
from tests.support.processes import ROOT, Proc, start, start_engine
from tests.support.workers import Worker, start_worker

START_TIMEOUT_S = 30.0
LADDER_SERVICE = "digdown.v1.Ladder"


@pytest.fixture(scope="session")
def ladder_env(
    django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """Environment of every ladder subprocess: same database and media, loopback allowed."""
    with django_db_blocker.unblock():
        url = database_url()
    media = tmp_path_factory.mktemp("ladder-media")
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "DATABASE_URL": url,
        "LADDER_MEDIA_ROOT": str(media),
        "LADDER_DEV_MODE": "1",
        "ENGINE_ADDRESS": "",  # workers start their own engine
        "CELERY_BROKER_URL": "",
        "REDIS_URL": "",
        "LADDER_BROKER_DIR": str(tmp_path_factory.mktemp("ladder-broker")),
        # Failure limits have their own tests (tests/ladder/grpc/test_auth_abuse.py).
        "LADDER_AUTH_FAILURES_PER_ADDRESS": "100000/min",
        "LADDER_CACHE_URL": "",
    }


@pytest.fixture(scope="session")
def worker_env(
    ladder_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """``ladder_env`` on a broker of its own: only what is sent with it reaches ``ladder_worker``.

    (Challenges the grpcserver queues stay queued, as the API tests expect.)
    """
    return {**ladder_env, "LADDER_BROKER_DIR": str(tmp_path_factory.mktemp("worker-broker"))}


@pytest.fixture(scope="session")
def ladder_worker(worker_env: dict[str, str], grpc_procdir: Path) -> Iterator[Worker]:
    """A Celery worker on the test database: it plays what is queued with ``worker_env``."""
    worker = start_worker(worker_env, grpc_procdir, "ladder-worker")
    yield worker
    assert worker.stop() == 0, worker.log()


def start_manage(
    args: list[str], env: dict[str, str], tmp: Path, name: str, *, health: str | None = None
) -> Proc:
    """Start ``manage.py ARGS --listen 127.0.0.1:0 --port-file F``; wait for port and health."""
    return start(
        ["manage.py", *args], tmp, name, health_service=health, env=env, timeout_s=START_TIMEOUT_S
    )


def manage(
    args: list[str], env: dict[str, str], timeout_s: float = 60.0
) -> subprocess.CompletedProcess[str]:
    """Run a management command to completion (bounded) and capture its output."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout_s, check=False,
    )  # fmt: skip


@pytest.fixture(scope="session")
def grpc_procdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ladder-procs")


@pytest.fixture(scope="session")
def ladder_server(ladder_env: dict[str, str], grpc_procdir: Path) -> Iterator[Proc]:
    """One grpcserver for the session (throttle off; the throttle test starts its own)."""
    p = start_manage(
        ["grpcserver", "--rate", "0", "--log-level", "INFO"],
        ladder_env, grpc_procdir, "grpcserver", health=LADDER_SERVICE,
    )  # fmt: skip
    yield p
    assert p.stop() == 0, p.log()


@pytest.fixture(autouse=True)
def _no_internal_errors(request: pytest.FixtureRequest) -> Iterator[None]:
    """An INTERNAL answer of the shared grpcserver (gRPC's 5xx) fails the test that caused it."""
    if "ladder_server" not in request.fixturenames and "stub" not in request.fixturenames:
        yield
        return
    server: Proc = request.getfixturevalue("ladder_server")
    seen = len(server.log())
    yield
    new = server.log()[seen:]
    if "-> INTERNAL" in new or "Traceback" in new:
        pytest.fail(f"the Ladder gRPC server failed internally:\n{new[-4000:]}")


@pytest.fixture(scope="session")
def ladder_engine(grpc_procdir: Path) -> Iterator[Proc]:
    p = start_engine(grpc_procdir, "ladder-engine")
    yield p
    p.stop()


@pytest.fixture
def stub(ladder_server: Proc) -> Iterator[Any]:
    with grpc.insecure_channel(ladder_server.address) as channel:
        yield ladder_pb2_grpc.LadderStub(channel)


def bearer(secret: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {secret}")]


@pytest.fixture
def user_token(transactional_db: Any) -> Callable[..., tuple[Any, str]]:
    """A committed user and a token secret for it."""
    from ladder.accounts.models import User
    from ladder.accounts.services import token_create

    def _make(username: str, *, staff: bool = False) -> tuple[Any, str]:
        user = User.objects.create_user(username=username, password="pw-12345678", is_staff=staff)
        return user, token_create(user=user, name="grpc-test").secret

    return _make
