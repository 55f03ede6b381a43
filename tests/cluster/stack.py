"""The ladder as nine machines: what the cluster drills start, break, heal and check.

Nodes (network namespaces, ``tests/cluster/netns.py``):

- ``data``: its own PostgreSQL (``initdb`` into a temp folder, run as the
  ``postgres`` user) and its own ``redis-server`` (broker and shared cache);
- ``eng1``, ``eng2``: one rules engine each (``ENGINE_ADDRESS`` names both);
- ``w1``, ``w2``: one ``celery worker`` each;
- ``web``: gunicorn (REST and pages), the Ladder gRPC server and beat;
- ``bots``: the remote house bots (slow enough that a match lasts a few seconds);
- ``web2``: a second Ladder gRPC server (the presence of connected bots in the
  shared Redis, so either server's streams serve any worker's seats);
- ``conn``: the connected house bots (``digdown.connect``: no listening port, each
  opens its Play stream to ``web`` or ``web2``, and reconnects through both).

PostgreSQL and Redis also listen on unix sockets in the temp folder: that is how
the test process (in the host namespace) creates matches and checks the stored
results and the broker's queues, without sending a packet to the namespaces.
Every process is started in a session of its own and stopped through its own
handle (its process group); ``close()`` stops them all and deletes the namespaces.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from tests.cluster.netns import SUBNET, Network, Node, sh
from tests.support.processes import ROOT
from tests.support.workers import wait_until

NODES = ("data", "eng1", "eng2", "w1", "w2", "web", "bots", "web2", "conn")
ENGINE_PORT, GRPC_PORT, WEB_PORT, REDIS_PORT, PG_PORT = 50051, 50052, 8000, 6379, 5432
RELAY_PORT = 50053  # each gRPC server's internal relay (the workers dial it)
BOT_PORTS = (7001, 7002, 7003, 7004)
SLOW_BOT = ROOT / "tests" / "workers" / "runner" / "misbehaving" / "slow_bot.py"
# The connected house bots: this many, named linked0.., one process each on ``conn``.
CONNECTED = 4
CONNECTED_BOT = ROOT / "tests" / "ladder" / "grpc" / "connected" / "connected_bot.py"
# The hosted house bots: this many uploads, named kept0.., run in a sandbox by the workers.
HOSTED = 2
GRPC_SERVERS = {"grpc": "web", "grpc2": "web2"}  # service -> node
START_S = 90.0
# Short on purpose, so drills recover in seconds; the queued grace keeps its default
# (600 s): a drill that relied on it would not finish in time.
LADDER_ENV = {
    "LADDER_MATCH_LEASE_S": "6",
    "LADDER_JANITOR_INTERVAL_S": "3",
    "LADDER_MATCH_RETRY_BACKOFF_S": "1",
    "LADDER_ENGINE_RESUME_S": "15",
    "LADDER_MATCH_MAX_ATTEMPTS": "4",
    "LADDER_MATCH_DECISION_S": "1",
    "LADDER_MATCH_BANK_S": "2",
    "LADDER_MATCHMAKER_TARGET": "0",
    # Elo, as the rest of the suite: its rating sum is conserved exactly, which every
    # drill checks (a Weng-Lin system's is not).
    "LADDER_RATING_SYSTEM": "elo",
    # Connected bots: streams pinged often (a stopped server's streams are seen dead in
    # seconds); a seat whose server went away waits this long for its bot to come back.
    "LADDER_CONNECT_PING_INTERVAL_S": "2",
    "LADDER_CONNECT_PING_TIMEOUT_S": "6",
    "LADDER_CONNECT_RELAY_GRACE_S": "30",
}


@dataclass
class Service:
    """One process on one node, started (and restarted) by the cluster."""

    name: str
    node: Node
    argv: list[str]
    env: dict[str, str]
    log_dir: Path
    user: str | None = None  # run as this user (PostgreSQL refuses root)
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def log_path(self) -> Path:
        return self.log_dir / f"{self.name}.log"

    def start(self) -> Service:
        self.starts += 1
        drop = ["setpriv", f"--reuid={self.user}", f"--regid={self.user}", "--init-groups"]
        argv = [*self.node.exec_prefix(), *(drop if self.user else []), *self.argv]
        with self.log_path.open("ab") as log:
            log.write(f"--- start {self.starts}: {' '.join(self.argv)}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                argv, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the whole process group (a worker's main process and its pool children)."""
        if self.alive():
            assert self.proc is not None
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            if sig == signal.SIGKILL:
                self.proc.wait(30)

    def stop(self, timeout_s: float = 30.0) -> None:
        if not self.alive():
            return
        assert self.proc is not None
        self.kill(signal.SIGTERM)
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.kill(signal.SIGKILL)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""


@dataclass
class Stack:
    """The nine machines and everything running on them."""

    net: Network
    tmp: Path
    services: dict[str, Service] = field(default_factory=dict)
    token: str = ""
    bot_ids: list[int] = field(default_factory=list)
    connected_ids: list[int] = field(default_factory=list)
    hosted_ids: list[int] = field(default_factory=list)

    # --- addresses and environments -------------------------------------------------

    def ip(self, node: str) -> str:
        return self.net.nodes[node].ip

    @property
    def pg_socket_dir(self) -> Path:
        return self.tmp / "pgsock"

    @property
    def redis_socket(self) -> Path:
        return self.tmp / "redis.sock"

    def django_env(self, *, host_side: bool = False) -> dict[str, str]:
        """The environment of every ladder process; ``host_side``: over the unix sockets."""
        data = self.ip("data")
        if host_side:
            db = f"postgres://postgres@{quote(str(self.pg_socket_dir), safe='')}/ladder"
            broker = f"redis+socket://{self.redis_socket}"
            cache = ""
        else:
            db = f"postgres://postgres@{data}:{PG_PORT}/ladder"
            broker = f"redis://{data}:{REDIS_PORT}/0"
            cache = f"redis://{data}:{REDIS_PORT}/1"
        engines = ",".join(f"{self.ip(n)}:{ENGINE_PORT}" for n in ("eng1", "eng2"))
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.tmp),
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
            "DJANGO_SETTINGS_MODULE": "ladder.settings",
            "LADDER_DEV_MODE": "1",
            "DJANGO_ALLOWED_HOSTS": self.ip("web"),
            "LADDER_ENDPOINT_ALLOWED_NETWORKS": f"{SUBNET}.0/24",
            "DATABASE_URL": db,
            "CELERY_BROKER_URL": broker,
            "REDIS_URL": "",
            "LADDER_CACHE_URL": cache,
            "LADDER_MEDIA_ROOT": str(self.tmp / "media"),
            "LADDER_BROKER_DIR": str(self.tmp / "broker-unused"),
            "ENGINE_ADDRESS": engines,
            "GRPC_ENABLE_FORK_SUPPORT": "false",
            **LADDER_ENV,
        }

    # --- starting ---------------------------------------------------------------------

    def add(self, name: str, node: str, argv: Sequence[str], *, user: str | None = None,
            env: dict[str, str] | None = None) -> Service:  # fmt: skip
        service = Service(
            name, self.net.nodes[node], list(argv), env or self.django_env(), self.tmp, user
        )
        self.services[name] = service
        return service

    def in_node(
        self, node: str, argv: Sequence[str], timeout_s: float = 60.0
    ) -> subprocess.CompletedProcess[str]:
        """Run a command inside ``node`` (a client on that machine) and wait for it."""
        return subprocess.run(
            [*self.net.nodes[node].exec_prefix(), *argv], cwd=ROOT, env=self.django_env(),
            capture_output=True, text=True, timeout=timeout_s,
        )  # fmt: skip

    def drive(self, *args: str, timeout_s: float = 120.0) -> Any:
        """``python -m tests.cluster.drive ARGS`` on the host side (unix sockets only)."""
        done = subprocess.run(
            [sys.executable, "-m", "tests.cluster.drive", *args], cwd=ROOT,
            env=self.django_env(host_side=True), capture_output=True, text=True,
            timeout=timeout_s,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"drive {args[0]} failed: {done.stderr[-3000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    def start_all(self) -> None:
        self.start_postgres()
        self.start_redis(persist=False)
        for i, port in enumerate(BOT_PORTS):
            self.add(f"bot{i}", "bots", [sys.executable, str(SLOW_BOT), "--listen",
                     f"{self.ip('bots')}:{port}", "--sleep", "0.005"]).start()  # fmt: skip
        for name in ("eng1", "eng2"):
            listen = f"{self.ip(name)}:{ENGINE_PORT}"
            self.add(name, name, [sys.executable, "-m", "engine.server", "--listen", listen,
                     "--log-level", "WARNING"]).start()  # fmt: skip
        setup = self.drive("setup", "--bots", ",".join(f"{self.ip('bots')}:{p}" for p in BOT_PORTS),
                           "--connected", str(CONNECTED), "--hosted", str(HOSTED))  # fmt: skip
        self.token, self.bot_ids = setup["token"], setup["bots"]
        self.connected_ids, self.hosted_ids = setup["connected"], setup["hosted"]
        web_env = {**self.django_env(), "LADDER_WEB_BIND": f"{self.ip('web')}:{WEB_PORT}",
                   "LADDER_WEB_WORKERS": "1", "LADDER_WEB_ACCESS_LOG": ""}  # fmt: skip
        self.add("web", "web", [sys.executable, "-m", "gunicorn", "-c",
                 str(ROOT / "ladder" / "gunicorn.conf.py"), "ladder.wsgi:application"],
                 env=web_env).start()  # fmt: skip
        for name, node in GRPC_SERVERS.items():
            relay = {**self.django_env(), "LADDER_RELAY_LISTEN": f"{self.ip(node)}:{RELAY_PORT}"}
            self.add(name, node, [sys.executable, "manage.py", "grpcserver", "--listen",
                     f"{self.ip(node)}:{GRPC_PORT}", "--max-workers", "8"],
                     env=relay).start()  # fmt: skip
        self.add("beat", "web", [sys.executable, "-m", "celery", "-A", "workers.celery_app",
                 "beat", "-l", "INFO", "-s", str(self.tmp / "beat-schedule")]).start()  # fmt: skip
        for name in ("w1", "w2"):
            self.add(name, name, self.worker_argv(name)).start()
        for name in GRPC_SERVERS:
            self.wait_port(name)
        for i in range(CONNECTED):
            self.add(f"cbot{i}", "conn", self.connected_argv(i),
                     env={**self.django_env(), "DIGDOWN_TOKEN": self.token}).start()  # fmt: skip
        self.wait_ready()

    def connected_argv(self, i: int, servers: Sequence[str] = tuple(GRPC_SERVERS)) -> list[str]:
        """A connected house bot: it dials ``servers`` in turn (reconnecting after a loss)."""
        ladder = ",".join(f"{self.ip(GRPC_SERVERS[s])}:{GRPC_PORT}" for s in servers)
        return [sys.executable, str(CONNECTED_BOT), "--connect", ladder, "--bot", f"linked{i}",
                "--think-ms", "60"]  # fmt: skip

    def connections(self, name: str) -> int:
        """How many times the connected bot ``name`` was welcomed on a stream so far."""
        return self.services[name].log().count("connected to ")

    def wait_connected(self, name: str, since: int = 0) -> None:
        service = self.services[name]

        def welcomed() -> bool:
            if not service.alive():
                raise AssertionError(f"{name} exited: {service.log()[-3000:]}")
            return self.connections(name) > since

        wait_until(welcomed, START_S, f"{name} connected", poll_s=0.5)

    @staticmethod
    def worker_argv(name: str) -> list[str]:
        return [sys.executable, "-m", "celery", "-A", "workers.celery_app", "worker",
                "-c", "1", "-n", f"{name}@%h", "-l", "INFO",
                "--without-mingle", "--without-gossip"]  # fmt: skip

    def wait_ready(self) -> None:
        for name in ("eng1", "eng2", *(f"bot{i}" for i in range(len(BOT_PORTS)))):
            self.wait_port(name)
        for name in ("w1", "w2"):
            self.wait_worker(name)
        for name in GRPC_SERVERS:
            self.wait_port(name)
        for i in range(CONNECTED):
            self.wait_connected(f"cbot{i}")

        def smoked() -> bool:  # each upload's smoke match, played by a worker
            versions = self.drive("hosted-ready")
            if versions["invalid"]:
                raise AssertionError(f"a hosted house bot failed its smoke match: {versions}")
            return versions["pending"] == 0

        wait_until(smoked, START_S, "the hosted house bots are valid", poll_s=2.0)
        wait_until(
            lambda: self.in_node("bots", [sys.executable, "-m", "deploy.health", "http",
                                 f"http://{self.ip('web')}:{WEB_PORT}/"]).returncode == 0,
            START_S, "the web server answers", poll_s=1.0,
        )  # fmt: skip

    def wait_port(self, name: str) -> None:
        service = self.services[name]
        port = {"grpc": GRPC_PORT, "grpc2": GRPC_PORT}.get(
            name, ENGINE_PORT if name.startswith("eng") else None
        )
        if port is None:
            port = BOT_PORTS[int(name.removeprefix("bot"))]
        probe = "import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), 1)"

        def up() -> bool:
            if not service.alive():
                raise AssertionError(f"{name} exited: {service.log()[-3000:]}")
            return self.in_node(service.node.name, [sys.executable, "-c", probe,
                                service.node.ip, str(port)]).returncode == 0  # fmt: skip

        wait_until(up, START_S, f"{name} listens", poll_s=0.5)

    def wait_worker(self, name: str, since: int = 0) -> None:
        service = self.services[name]

        def ready() -> bool:
            if not service.alive():
                raise AssertionError(f"{name} exited: {service.log()[-3000:]}")
            return service.log().count(" ready.") > since

        wait_until(ready, START_S, f"worker {name} ready", poll_s=0.5)

    def restart_worker(self, name: str) -> None:
        service = self.services[name]
        seen = service.log().count(" ready.")
        service.start()
        self.wait_worker(name, since=seen)

    # --- PostgreSQL and Redis -----------------------------------------------------------

    def start_postgres(self) -> None:
        bindir = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1]
        data = self.tmp / "pg"
        if not data.exists():
            for folder in (data, self.pg_socket_dir):
                folder.mkdir()
                shutil.chown(folder, "postgres", "postgres")
            subprocess.run(
                ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups",
                 str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
                 "--no-sync"], check=True, capture_output=True, timeout=120,
            )  # fmt: skip
            with (data / "pg_hba.conf").open("a") as hba:
                hba.write(f"host all all {self.ip('data').rsplit('.', 1)[0]}.0/24 trust\n")
        # No fsync (the drills kill the server, never the machine: what was written to the
        # kernel survives), but every commit is written before it is acknowledged: with
        # synchronous_commit=off a kill lost the last commits, three newly created
        # matches once, which no real deployment would do.
        pg = self.services.get("postgres") or self.add(
            "postgres", "data",
            [str(bindir / "postgres"), "-D", str(data), "-c", f"listen_addresses={self.ip('data')}",
             "-c", f"unix_socket_directories={self.pg_socket_dir}", "-c", "fsync=off",
             "-c", "full_page_writes=off", "-c", "max_connections=80"],
            user="postgres",
        )  # fmt: skip
        pg.start()
        ready = [str(bindir / "pg_isready"), "-q", "-h", str(self.pg_socket_dir)]
        wait_until(
            lambda: subprocess.run(ready, timeout=10).returncode == 0,
            START_S, "PostgreSQL accepts connections", poll_s=0.3,
        )  # fmt: skip
        if pg.starts == 1:
            subprocess.run(
                [str(bindir / "createdb"), "-h", str(self.pg_socket_dir), "-U", "postgres",
                 "ladder"],
                check=True, capture_output=True, timeout=60,
            )  # fmt: skip

    def start_redis(self, *, persist: bool) -> None:
        folder = self.tmp / "redis"
        folder.mkdir(exist_ok=True)
        argv = ["redis-server", "--bind", self.ip("data"), "--port", str(REDIS_PORT),
                "--unixsocket", str(self.redis_socket), "--unixsocketperm", "777",
                "--dir", str(folder), "--protected-mode", "no", "--save", "",
                "--appendonly", "yes" if persist else "no", "--appendfsync", "always"]  # fmt: skip
        redis = self.services.get("redis")
        if redis is None:
            redis = self.add("redis", "data", argv)
        redis.argv = argv
        self.redis_socket.unlink(missing_ok=True)
        redis.start()
        wait_until(lambda: self.redis_ping(), START_S, "Redis answers", poll_s=0.1)

    def redis_client(self) -> Any:
        import redis

        return redis.Redis(unix_socket_path=str(self.redis_socket), socket_timeout=5)

    def redis_ping(self) -> bool:
        try:
            return bool(self.redis_client().ping())
        except Exception:
            return False

    def broker_backlog(self) -> dict[str, int]:
        """Messages waiting in the broker (every queue, every priority) and unacknowledged."""
        client = self.redis_client()
        backlog = {}
        for key in client.scan_iter(match="*"):
            name = key.decode(errors="replace")
            kind = client.type(key).decode()
            if kind == "list" and (name.startswith("matches") or name.startswith("ladder")):
                backlog[name] = int(client.llen(key))
        backlog["unacked"] = int(client.hlen("unacked"))
        return {k: v for k, v in backlog.items() if v}

    def unacked(self) -> list[str]:
        """The messages held unacknowledged: task, arguments, ETA (what a drill that did
        not drain shows)."""
        out = []
        for tag, raw in self.redis_client().hgetall("unacked").items():
            try:
                headers = json.loads(raw)[0]["headers"]
                out.append(f"{headers.get('task')}{headers.get('argsrepr')} eta "
                           f"{headers.get('eta')} ({tag.decode()})")  # fmt: skip
            except Exception as exc:
                out.append(f"{tag!r}: {exc}")
        return out

    # --- the database, read directly ---------------------------------------------------

    def statuses(self, ids: Sequence[int]) -> dict[str, int]:
        import psycopg

        with psycopg.connect(host=str(self.pg_socket_dir), user="postgres", dbname="ladder",
                             connect_timeout=5) as conn:  # fmt: skip
            rows = conn.execute(
                "SELECT status, count(*) FROM matches_match WHERE id = ANY(%s) GROUP BY status",
                (list(ids),),
            ).fetchall()
        return {status: count for status, count in rows}

    def settled(self, ids: Sequence[int]) -> bool:
        try:
            found = self.statuses(ids)
        except Exception:
            return False  # PostgreSQL is being restarted by the drill
        return found.get("finished", 0) + found.get("errored", 0) == len(ids)

    def diagnosis(self, ids: Sequence[int]) -> str:
        """What a drill that did not settle shows: its matches, the broker, the logs' tails."""
        import psycopg

        lines = []
        try:
            with psycopg.connect(host=str(self.pg_socket_dir), user="postgres",
                                 dbname="ladder", connect_timeout=5) as conn:  # fmt: skip
                rows = conn.execute(
                    "SELECT id, status, attempts, claimed_by, enqueued_at, error"
                    " FROM matches_match WHERE id = ANY(%s) ORDER BY id", (list(ids),),
                ).fetchall()  # fmt: skip
            lines += [f"match {r}" for r in rows]
            missing = sorted(set(ids) - {r[0] for r in rows})
            if missing:
                lines.append(f"created but not in the database: {missing}")
        except Exception as exc:
            lines.append(f"database: {exc}")
        try:
            lines.append(f"broker: {self.broker_backlog()}")
            lines += [f"unacked: {held}" for held in self.unacked()]
        except Exception as exc:
            lines.append(f"broker: {exc}")
        for name in ("w1", "w2", "beat"):
            tail = self.services[name].log().splitlines()[-25:]
            lines += [f"--- {name}"] + [line[:300] for line in tail]
        return "\n".join(lines)

    # --- stopping ---------------------------------------------------------------------

    def close(self) -> list[str]:
        """Stop everything, delete the namespaces; returns what was still running."""
        left = []
        for name in ("beat", "w1", "w2", *(f"cbot{i}" for i in range(CONNECTED)),
                     *GRPC_SERVERS, "web", "eng1", "eng2"):  # fmt: skip
            if name in self.services:
                self.services[name].stop(timeout_s=20)
        for service in self.services.values():
            service.stop(timeout_s=10)
        for node in self.net.nodes.values():
            pids = sh("ip", "netns", "pids", node.netns, check=False).stdout.split()
            for pid in pids:
                left.append(f"{node.name}:{pid}")
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)  # started by us, inside our namespace
        self.net.close()
        return left


def open_stack(prefix: str) -> Stack:
    tmp = Path(tempfile.mkdtemp(prefix="ddl-cluster-"))
    tmp.chmod(0o755)  # the postgres user walks into it
    (tmp / "media").mkdir()
    net = Network(prefix)
    stack = Stack(net, tmp)
    try:
        net.open(NODES)
        stack.start_all()
    except BaseException:
        stack.close()
        raise
    return stack


def remove_tmp(stack: Stack) -> None:
    shutil.rmtree(stack.tmp, ignore_errors=True)


def now() -> float:
    return time.monotonic()
