"""``make run`` for real: ``python -m deploy.run`` with every process it starts.

What a new user and CI run: ``make run MATCHES=3`` plays three matches,
prints the leaderboard and exits 0; Ctrl-C while the ladder plays stops
everything, finishes (or requeues) what was running and leaves no process
behind. Each run gets a ``var/`` of its own (``LADDER_VAR_DIR``), so its
database, broker files and logs are the test's; what is "left behind" is any
process whose environment still names that directory.

The example bots are hosted where the sandbox runs (CI installs bubblewrap)
and remote bots served by ``make run`` where it does not: both are the
product's paths on such a machine.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from digdown.v1 import ladder_pb2, ladder_pb2_grpc
from tests.support.redis import RedisServer

ROOT = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_S = 180


def run_env(var_dir: Path) -> dict[str, str]:
    """The developer's environment, less anything that points at other databases or brokers."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "LADDER_CACHE_URL"}
        and not k.startswith(("LADDER_", "PYTEST_"))
    }
    env["LADDER_VAR_DIR"] = str(var_dir)
    return env


def command(*extra: str) -> list[str]:
    # Port 0 everywhere: free ports, so runs in parallel (and a developer's `make run`)
    # never collide.
    ports = ["--web-port", "0", "--grpc-port", "0", "--engine-port", "0"]
    return [sys.executable, "-m", "deploy.run", *ports, *extra]


def leftovers(var_dir: Path) -> list[str]:
    """Processes (pid and command) whose environment names this run's var directory."""
    marker = f"LADDER_VAR_DIR={var_dir}".encode()
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            environ = (proc / "environ").read_bytes()
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in environ.split(b"\0"):
            found.append(f"{proc.name}: {cmdline}")
    return found


def check_what_the_banner_says(out: str) -> None:
    """The site, the REST API and the gRPC API answer where it says, with the token it printed."""
    web = re.search(r"leaderboard\s+(http://127\.0\.0\.1:\d+)/", out)
    grpc_at = re.search(r"Ladder gRPC\s+(127\.0\.0\.1:\d+)", out)
    token = re.search(r"API token\s+(ddl_\S+)", out)
    assert web and grpc_at and token, out
    with urllib.request.urlopen(f"{web[1]}/", timeout=30) as page:
        html = page.read().decode()
    assert "heuristic" in html and "random" in html, "the example bots are on the leaderboard"
    request = urllib.request.Request(
        f"{web[1]}/api/v1/tokens/", headers={"Authorization": f"Bearer {token[1]}"}
    )
    with urllib.request.urlopen(request, timeout=30) as reply:
        assert reply.status == 200
    with grpc.insecure_channel(grpc_at[1]) as channel:
        mine = ladder_pb2_grpc.LadderStub(channel).ListMyBots(
            ladder_pb2.ListMyBotsRequest(),
            metadata=[("authorization", f"Bearer {token[1]}")],
            timeout=30,
        )
    # The printed Python line (instead of grpcurl, which few have) works as printed.
    line = re.search(r'^\s+\.venv/bin/python -c "(.+ListMyBots.+)"$', out, re.M)
    assert line, out
    printed = subprocess.run(
        [sys.executable, "-c", line[1]], capture_output=True, text=True, timeout=60, check=False
    )
    assert printed.returncode == 0 and "starter" in printed.stdout, printed.stderr
    names = {bot.name for bot in mine.bots}
    # The demo user owns two examples; the second demo account ("rival") the third.
    assert len(names) == 2 and all("random" in n or "starter" in n for n in names), names


def match_statuses(var_dir: Path) -> dict[str, int]:
    with sqlite3.connect(var_dir / "ladder.sqlite3") as db:
        return dict(db.execute("SELECT status, count(*) FROM matches_match GROUP BY status"))


def test_make_run_matches_plays_them_prints_the_board_and_leaves_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        command("--matches", "3"),
        cwd=ROOT,
        env=run_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    for started in (
        "the engine",
        "the Celery worker",
        "celery beat",
        "the Ladder gRPC",
        "the web server",
    ):
        assert re.search(rf"ok  {started}.* \(pid \d+\)", out), started
    assert re.search(r"API token\s+ddl_\S+", out)
    assert re.search(r"sign in .* user demo\s+password \S+\s+\(staff\)", out)
    assert re.search(r"^\s+user rival\s+password \S+$", out, re.M)
    assert "Ctrl-C stops everything" not in out  # it stops by itself
    assert "github.com/fullstorydev/grpcurl" in out  # says where to get it; prints Python
    saved = tmp_path / "demo-accounts.json"
    assert saved.stat().st_mode & 0o077 == 0  # the passwords and tokens are the owner's only
    assert json.loads(saved.read_text())["demo"]["token"] in out
    board = out[out.index("Leaderboard (") :]
    rows = re.findall(r"^\s+\d+\s+(\S+)\s+(hosted|remote)\s+\d+\.\d\s+(\d+)\s+\d+$", board, re.M)
    assert len(rows) == 3, board
    # Three matches of 2-4 seats among three bots: at least six seats were played.
    assert sum(int(games) for _, _, games in rows) >= 6, board
    assert "Stopped; nothing left running." in out
    assert leftovers(tmp_path) == []
    statuses = match_statuses(tmp_path)
    assert statuses.get("finished", 0) >= 3 and set(statuses) == {"finished"}, statuses
    with sqlite3.connect(tmp_path / "ladder.sqlite3") as db:
        same_owner = db.execute(
            "SELECT s.match_id FROM matches_matchseat s JOIN bots_bot b ON b.id = s.bot_id "
            "GROUP BY s.match_id, b.owner_id HAVING count(*) > 1"
        ).fetchall()
        staff = db.execute("SELECT is_staff FROM accounts_user WHERE username = 'demo'").fetchone()
    assert same_owner == [] and staff == (1,)
    for log in ("engine", "worker", "beat", "grpc", "web"):
        assert (tmp_path / "log" / f"{log}.log").stat().st_size > 0, log


def test_ctrl_c_while_playing_stops_everything_and_leaves_no_match_running(
    tmp_path: Path,
) -> None:
    proc = subprocess.Popen(
        command(),
        cwd=ROOT,
        env=run_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + RUN_TIMEOUT_S
        # Interrupt once the ladder is playing: at least two matches ended, more are in play
        # (the fallback matchmaker keeps one per worker process queued or running).
        while sum("finished:" in line for line in seen) < 2:
            line = proc.stdout.readline()
            assert line or proc.poll() is None, "".join(seen)[-3000:]
            seen.append(line)
            assert time.monotonic() < deadline, "".join(seen)[-3000:]
        check_what_the_banner_says("".join(seen))
        proc.send_signal(signal.SIGINT)
        rest, _ = proc.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = "".join(seen) + rest
    assert proc.returncode == 0, out[-3000:]
    assert "Stopping" in rest and "Stopped; nothing left running." in rest, rest
    assert leftovers(tmp_path) == []
    statuses = match_statuses(tmp_path)
    assert statuses.get("running", 0) == 0, statuses
    assert statuses.get("finished", 0) >= 2, statuses


@pytest.mark.parametrize("arg", ["--matches=-1"])
def test_bad_arguments_are_refused_before_anything_starts(tmp_path: Path, arg: str) -> None:
    done = subprocess.run(
        command(arg),
        cwd=ROOT,
        env=run_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--matches" in done.stderr
    assert leftovers(tmp_path) == []


@pytest.fixture
def postgres_database() -> Iterator[str]:
    """A new, empty PostgreSQL database for one run (dropped afterwards)."""
    psycopg = pytest.importorskip("psycopg")
    server = os.environ.get("LADDER_PG_URL", "postgres://postgres@127.0.0.1:5432/test")
    name = f"stack_run_{os.getpid()}_{int(time.time())}"
    try:
        admin = psycopg.connect(server, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"PostgreSQL is not reachable: {exc}")
        pytest.skip(f"PostgreSQL is not reachable: {exc}")
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
        try:
            yield server.rsplit("/", 1)[0] + "/" + name
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_make_run_on_postgresql_and_redis(tmp_path: Path, postgres_database: str) -> None:
    redis = RedisServer(tmp_path)
    redis.start()
    try:
        env = run_env(tmp_path / "var")
        env.update(DATABASE_URL=postgres_database, REDIS_URL=redis.url)
        done = subprocess.run(
            command("--matches", "2"),
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
    finally:
        redis.kill()
    out = done.stdout
    assert done.returncode == 0, out[-3000:] + done.stderr[-3000:]
    assert re.search(r"database\s+PostgreSQL stack_run_", out), out
    assert re.search(r"broker\s+redis\+socket://", out), out
    assert "Leaderboard (" in out and "Stopped; nothing left running." in out
    assert leftovers(tmp_path / "var") == []
    # Nothing of this run went to SQLite or the embedded broker.
    assert not (tmp_path / "var" / "ladder.sqlite3").exists()
    assert not (tmp_path / "var" / "broker").exists()
