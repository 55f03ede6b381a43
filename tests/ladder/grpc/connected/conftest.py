"""Real processes for the connected-bot tests: Redis, two grpcservers, a worker, bots.

Connected bots play through a ``grpcserver`` (its Play stream) and a Celery
worker (which relays each decision to the process holding the stream), with
their presence in a Redis of the tests' own. Everything is a real process on
loopback; every wait is bounded; every process is stopped through its handle.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.ladder.grpc.conftest import LADDER_SERVICE, start_manage
from tests.support.processes import ROOT, Proc
from tests.support.redis import RedisServer
from tests.support.workers import Worker, start_worker, wait_until

BOT_SCRIPT = Path(__file__).with_name("connected_bot.py")
NODE_BOT = ROOT / "examples" / "node" / "bot.js"


@pytest.fixture(scope="session")
def presence_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("connect-redis"))
    server.start()
    yield server
    server.kill()


@pytest.fixture(scope="session")
def connect_env(
    ladder_env: dict[str, str], presence_redis: RedisServer, tmp_path_factory: Any
) -> dict[str, str]:
    """The ladder's environment with presence in the tests' Redis and quick pings."""
    return {
        **ladder_env,
        "LADDER_PRESENCE_URL": presence_redis.url,
        "LADDER_PRESENCE_PREFIX": f"t{os.getpid()}:",
        "LADDER_BROKER_DIR": str(tmp_path_factory.mktemp("connect-broker")),
        "LADDER_CONNECT_PING_INTERVAL_S": "1",
        "LADDER_CONNECT_PING_TIMEOUT_S": "3",
        "LADDER_MATCH_DECISION_S": "0.5",
        "LADDER_MATCH_BANK_S": "2",
        "LADDER_CONNECT_SEAT_WAIT_S": "2",
    }


@pytest.fixture(autouse=True)
def _presence_settings(settings: Any, connect_env: dict[str, str]) -> None:
    """This process reads (and publishes revocations to) the same presence as the servers."""
    settings.LADDER_PRESENCE_URL = connect_env["LADDER_PRESENCE_URL"]
    settings.LADDER_PRESENCE_PREFIX = connect_env["LADDER_PRESENCE_PREFIX"]


def start_grpcserver(env: dict[str, str], procdir: Path, name: str) -> Proc:
    return start_manage(
        ["grpcserver", "--rate", "0", "--log-level", "INFO"],
        env, procdir, name, health=LADDER_SERVICE,
    )  # fmt: skip


@pytest.fixture(scope="session")
def server_a(connect_env: dict[str, str], grpc_procdir: Path) -> Iterator[Proc]:
    p = start_grpcserver(connect_env, grpc_procdir, "connect-a")
    yield p
    p.stop()


@pytest.fixture(scope="session")
def connect_worker(connect_env: dict[str, str], grpc_procdir: Path) -> Iterator[Worker]:
    worker = start_worker(connect_env, grpc_procdir, "connect-worker")
    yield worker
    assert worker.stop() == 0, worker.log()


@dataclass
class BotProcess:
    """A connected bot process (it listens nowhere, so only its log tells what it does)."""

    proc: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 10.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode

    def welcomed(self, times: int = 1) -> bool:
        return self.log().count("connected to ") >= times


def listening_sockets(pid: int) -> list[str]:
    """The TCP sockets process ``pid`` listens on (from /proc: inode of every fd)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:[") : -1])
    found = []
    for table in ("tcp", "tcp6"):
        for line in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A" and cols[9] in inodes:  # 0A: LISTEN
                found.append(cols[1])
    return found


@pytest.fixture
def start_connected(
    connect_env: dict[str, str], grpc_procdir: Path
) -> Iterator[Callable[..., BotProcess]]:
    started: list[BotProcess] = []

    def _start(
        name: str, token: str, ladder: str, *extra: str, node: bool = False, tag: str = ""
    ) -> BotProcess:
        log_path = grpc_procdir / f"bot-{name}{tag}-{len(started)}.log"
        if node:
            args = ["node", str(NODE_BOT), "--connect", ladder, "--bot", name, *extra]
        else:
            args = [sys.executable, str(BOT_SCRIPT), "--connect", ladder, "--bot", name, *extra]
        with log_path.open("wb") as out:
            proc = subprocess.Popen(
                args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                env={**connect_env, "DIGDOWN_TOKEN": token},
            )  # fmt: skip
        bot = BotProcess(proc, log_path)
        started.append(bot)
        return bot

    yield _start
    for bot in started:
        bot.stop()


def wait_connected(bot: BotProcess, times: int = 1, timeout_s: float = 30.0) -> None:
    wait_until(
        lambda: bot.welcomed(times) or bot.proc.poll() is not None,
        timeout_s,
        f"the bot to connect ({times})",
    )
    assert bot.welcomed(times), bot.log()
