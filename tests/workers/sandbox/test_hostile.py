"""Hostile hosted bots, each uploaded and played in a real match in the real sandbox.

For every one: the attempt fails inside the sandbox (its own report in its
captured log says so, and the test checks the host side too), the match
completes with the fault or forfeit recorded, the worker stays healthy (the
engine serves, no descriptor or thread of the worker leaks), and no process of
the bot is left afterwards, checked by listing every process of the machine.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

from digdown.healthcheck import wait_until_serving
from examples.hosted_bundle import build
from tests.support.processes import Proc
from tests.workers.sandbox.conftest import hostile_bundle, probes
from workers.runner import BotSpec, MatchOutcome, TimeControl, run_match
from workers.runner.net import probe
from workers.sandbox import Bundle, HostedSeat, SandboxLimits, hosted_seat, hosted_seats
from workers.sandbox.view import runtime_view

pytestmark = pytest.mark.usefixtures("sandbox_ready")

TC = TimeControl(decision_s=0.25, bank_s=0.5, handshake_s=10.0)
LIMITS = SandboxLimits(start_s=30.0)  # generous: the machine may be busy
ROOT = Path(__file__).resolve().parents[3]
SEAT_DIRS = {"bot", "bundle", "dev", "proc", "run", "tmp"}  # made for each seat


def house(name: str) -> Bundle:
    filename, data = build(name)
    return Bundle(filename, data, "bot.py" if filename.endswith(".zip") else "")


def machine_processes(uid: int | None, pid_namespace: int) -> list[int]:
    """Every process of the machine that runs as ``uid`` or lives in ``pid_namespace``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            owner = os.stat(f"/proc/{entry}").st_uid
            ns = os.stat(f"/proc/{entry}/ns/pid").st_ino
        except OSError:
            continue
        if owner == uid or ns == pid_namespace:
            found.append(int(entry))
    return found


def open_fds() -> dict[str, str]:
    """This process's descriptors but grpc's own pollers (anon inodes it keeps for reuse)."""
    fds = {}
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if not target.startswith("anon_inode:"):
            fds[fd] = target
    return fds


@dataclass
class Played:
    outcome: MatchOutcome
    seats: list[HostedSeat]

    def log(self, seat: int = 0) -> bytes:
        return self.seats[seat].log_bytes()

    def probes(self, seat: int = 0) -> dict[str, str]:
        return probes(self.log(seat))

    def faults(self, seat: int = 0) -> list[str]:
        return [f.kind for f in self.outcome.faults if f.seat == seat]

    def forfeit(self, seat: int = 0) -> str:
        return next((f.reason for f in self.outcome.faults if f.seat == seat and f.forfeit), "")

    def out(self, seat: int = 0) -> bool:
        return bool(self.outcome.seats[seat]["out"])


@pytest.fixture(scope="module", autouse=True)
def warm_worker(engine: Proc, remote_random: Proc) -> None:
    """One well-behaved hosted match first: grpc opens its own descriptors on first use."""
    with hosted_seat(house("starter"), LIMITS) as seat:
        run_match(engine.address, [seat.bot_spec(), remote_random.address], seed=1)
    assert not seat.start_error


def assert_contained(
    seats: Sequence[HostedSeat], engine: Proc, fds: dict[str, str], threads: int
) -> None:
    """Nothing of the bots is left, and the worker is as it was (no descriptor or thread kept)."""
    for seat in seats:
        assert seat.leftovers == [], f"the launcher had to kill leftovers: {seat.leftovers}"
        assert machine_processes(seat.uid, seat.pid_namespace) == []
        assert seat.pid_namespace or seat.start_error
    wait_until_serving(engine.address, "digdown.v1.Engine", 10.0)
    deadline = time.monotonic() + 5
    while threading.active_count() > threads and time.monotonic() < deadline:
        time.sleep(0.05)  # cancelled timers end asynchronously
    assert threading.active_count() <= threads
    now = open_fds()
    assert len(now) <= len(fds) + 1, {k: v for k, v in now.items() if k not in fds}


def play(
    engine: Proc,
    bundles: Sequence[Bundle],
    others: Sequence[BotSpec | str] = (),
    limits: SandboxLimits = LIMITS,
) -> Played:
    """Start ``bundles`` as hosted seats (then ``others``), play one match, check containment."""
    fds, threads = open_fds(), threading.active_count()
    with hosted_seats(bundles, limits) as seats:
        specs = [s.bot_spec(name=f"hosted{i}") for i, s in enumerate(seats)]
        outcome = run_match(engine.address, [*specs, *others], seed=11, time_control=TC)
    assert outcome.result["ranks"], "the match did not complete"
    assert_contained(seats, engine, fds, threads)
    return Played(outcome, list(seats))


def test_network_is_unreachable(engine: Proc, remote_random: Proc) -> None:
    assert probe(engine.address, 2.0) == "open"  # reachable from the worker itself
    tcp = [
        ("1.1.1.1", 53),
        ("8.8.8.8", 443),
        ("127.0.0.1", 5432),
        ("127.0.0.1", 6379),
        ("127.0.0.1", engine.port),
        ("::1", engine.port),
        (remote_random.address.rsplit(":", 1)[0], remote_random.port),
    ]
    unix = [
        "/run/postgresql/.s.PGSQL.5432",
        "/var/run/postgresql/.s.PGSQL.5432",
        "/tmp/.s.PGSQL.5432",
        "/run/redis/redis-server.sock",
    ]
    played = play(engine, [hostile_bundle("network", tcp=tcp, unix=unix)], [remote_random.address])
    found = played.probes()
    assert len(found) == len(tcp) + len(unix) + 2
    assert all(outcome.startswith("failed") for outcome in found.values()), found
    assert played.faults() == []  # it still plays: the sandbox does not break a bot


def test_only_the_sdk_and_its_runtime_import(engine: Proc, remote_random: Proc) -> None:
    forbidden = ["django", "ladder", "workers", "engine.server", "psycopg", "redis", "pytest"]
    allowed = ["digdown.bot", "grpc", "google.protobuf", "grpc_health.v1.health", "json", "sqlite3"]
    played = play(
        engine,
        [hostile_bundle("imports", forbidden=forbidden, allowed=allowed)],
        [remote_random.address],
    )
    found = played.probes()
    for name in forbidden:
        assert found[f"import {name}"].startswith("failed ModuleNotFoundError"), name
    for name in allowed:
        assert found[f"import {name}"].startswith("SUCCEEDED"), (name, found[f"import {name}"])


def test_secrets_stay_outside(
    engine: Proc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret_parts = ["s3cr3t-" + os.urandom(8).hex(), os.urandom(8).hex()]
    secret = "".join(secret_parts)
    monkeypatch.setenv("DIGDOWN_TEST_SECRET", secret)
    database = tmp_path / "ladder.sqlite3"
    database.write_text(f"SQLite format 3 {secret}")
    starter = (ROOT / "examples" / "starter_bot.py").read_bytes()
    victim_bundle = Bundle("starter.py", starter)
    fds, threads = open_fds(), threading.active_count()
    with hosted_seat(victim_bundle, LIMITS) as victim:
        assert not victim.start_error
        victim_dir = Path(victim.address.removeprefix("unix:")).parents[1]
        (victim_dir / "bundle" / "secret.txt").write_text(secret)  # the victim's own file
        victim_pids = victim.processes()
        files = [
            str(database),
            str(victim_dir / "bundle" / "secret.txt"),
            str(victim_dir / "bundle" / "starter.py"),
            *(f"/proc/{pid}/root/bot/secret.txt" for pid in victim_pids),
            *(f"/proc/{pid}/environ" for pid in [os.getpid(), *victim_pids]),
            "/etc/passwd",
            "/etc/shadow",
            str(ROOT / "pyproject.toml"),
        ]
        attacker = hostile_bundle(
            "secrets",
            secret_parts=secret_parts,
            files=files,
            pids=[os.getpid(), *victim_pids],
            runtime=[os.path.dirname(os.__file__)],
        )
        # The secret's two halves are apart in config.json: a scan of it finds nothing.
        with hosted_seat(attacker, LIMITS) as seat:
            outcome = run_match(
                engine.address,
                [seat.bot_spec(name="attacker"), victim.bot_spec(name="victim")],
                seed=5,
                time_control=TC,
            )
    assert outcome.result["ranks"]
    assert_contained([victim, seat], engine, fds, threads)
    log = seat.log_bytes()
    assert secret.encode() not in log and secret.encode() not in victim.log_bytes()
    found = probes(log)
    assert "DIGDOWN_TEST_SECRET" not in found["environ"]
    assert found["files with the secret"] == "[]"
    for path in files:
        assert found[f"read {path}"].startswith("failed"), path
    for pid in [os.getpid(), *victim_pids]:
        assert found[f"kill -0 {pid}"].startswith("failed")
        assert found[f"read /proc/{pid}/root"].startswith("failed")
    visible = json.loads(found["pids"])
    assert max(visible) < 100 and os.getpid() not in visible  # only its own namespace
    given = {PurePosixPath(m.dest).parts[1] for m in runtime_view().mounts}
    assert set(json.loads(found["visible"].replace("'", '"'))) <= given | SEAT_DIRS
    assert [f.seat for f in outcome.faults] == []


def test_writes_stay_inside(engine: Proc, remote_random: Proc, tmp_path: Path) -> None:
    host_file = tmp_path / "written-by-the-bot"
    project_file = ROOT / "var" / "written-by-the-bot"
    targets = [
        "/x",
        "/etc/x",
        "/usr/lib/x",
        "/sandbox/lib/digdown/x",
        "/bundle/x",
        "/run/x",
        "/dev/shm/x",
        "/proc/sys/kernel/hostname",
        str(host_file),
        str(project_file),
    ]
    played = play(engine, [hostile_bundle("writes", targets=targets)], [remote_random.address])
    found = played.probes()
    for path in targets:
        assert found[f"write {path}"].startswith("failed"), (path, found[f"write {path}"])
    assert found["write own dir"].startswith("SUCCEEDED")
    assert found["write tmp"].startswith("SUCCEEDED")
    assert "File too large" in found["write a 32 MiB file"]
    assert "No space left" in found["fill scratch with 12 MiB files"]
    if played.seats[0].mode == "root":  # its socket directory is locked once it serves
        assert found["write /run/bot/late"].startswith("failed")
    assert not host_file.exists() and not project_file.exists()
    assert played.faults() == []


def test_fork_bomb(engine: Proc) -> None:
    played = play(engine, [hostile_bundle("fork_bomb"), house("random")])
    found = played.probes()
    assert found["fork bomb"].startswith("SUCCEEDED")
    assert int(found["processes after the bomb"].split()[-1]) <= LIMITS.processes + 2
    # Each seat has its own uid: the bomb uses up its own process limit, not its neighbour's.
    assert played.seats[0].uid != played.seats[1].uid
    assert played.forfeit(1) == "" and not played.out(1)


def test_allocating_4_gb_fails(engine: Proc, remote_random: Proc) -> None:
    played = play(engine, [hostile_bundle("memory")], [remote_random.address])
    found = played.probes()
    assert found["allocate 4 GB"].startswith("failed MemoryError")
    assert found["allocate 4 GB in act"].startswith("failed MemoryError")
    assert played.faults() == []


def test_busy_loop_while_thinking_forfeits(engine: Proc, remote_random: Proc) -> None:
    played = play(engine, [hostile_bundle("busy", where="act")], [remote_random.address])
    assert played.faults()[:3] == ["timeout"] * 3
    assert played.out(0)


def test_busy_loop_hits_the_cpu_limit(engine: Proc) -> None:
    limits = SandboxLimits(start_s=60.0, cpu_s=2)
    played = play(engine, [hostile_bundle("busy", where="start"), house("random")], limits=limits)
    assert played.forfeit(0) == "not started: the bot killed by SIGXCPU (CPU time limit 2 s)"
    assert b"PROBE spinning: from the start" in played.log(0)
    assert played.outcome.ranks == [2, 1]


def test_sleeping_before_serving_forfeits_at_the_start_deadline(
    engine: Proc, remote_random: Proc
) -> None:
    limits = SandboxLimits(start_s=3.0)
    played = play(
        engine, [hostile_bundle("sleeper", where="start")], [remote_random.address], limits=limits
    )
    assert played.forfeit(0) == "not started: not serving within 3 s"
    assert played.outcome.ranks == [2, 1]  # the match went on without it
    assert b"PROBE sleeping: before serving" in played.log(0)
    assert b"[sandbox] not started: not serving within 3 s" in played.log(0)


def test_sleeping_while_thinking_forfeits(engine: Proc, remote_random: Proc) -> None:
    played = play(engine, [hostile_bundle("sleeper", where="act")], [remote_random.address])
    assert played.faults()[:3] == ["timeout"] * 3
    assert played.out(0)


def test_a_daemon_child_dies_with_the_bot(engine: Proc, remote_random: Proc) -> None:
    fds, threads = open_fds(), threading.active_count()
    with hosted_seat(hostile_bundle("orphan", exit_after=3), LIMITS) as seat:
        outcome = run_match(
            engine.address,
            [seat.bot_spec(name="orphan"), remote_random.address],
            seed=3,
            time_control=TC,
        )
        # The bot exited mid-game; its daemon went with it, before the seat was even closed.
        deadline = time.monotonic() + 10
        while seat.processes() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seat.processes() == []
    assert_contained([seat], engine, fds, threads)
    found = probes(seat.log_bytes())
    assert found["daemon"].startswith("pid ") and found["exiting"].startswith("after 3")
    forfeit = [f for f in outcome.faults if f.seat == 0 and f.forfeit]
    assert forfeit and forfeit[0].kind == "dead"


def test_a_daemon_child_dies_at_the_end_of_the_match(engine: Proc, remote_random: Proc) -> None:
    played = play(engine, [hostile_bundle("orphan", exit_after=10**9)], [remote_random.address])
    assert played.probes()["daemon"].startswith("pid ")
    assert played.faults() == []


def test_crash_at_start_forfeits_with_its_traceback(engine: Proc, remote_random: Proc) -> None:
    played = play(engine, [hostile_bundle("crash")], [remote_random.address])
    assert played.forfeit(0) == "not started: the bot exited with status 1"
    assert b"RuntimeError: hostile bot crashes at start" in played.log(0)
    assert played.outcome.ranks == [2, 1]


def test_flooding_stderr_is_capped(engine: Proc, remote_random: Proc) -> None:
    played = play(engine, [hostile_bundle("flood")], [remote_random.address])
    log = played.log(0)
    assert len(log) <= LIMITS.log_bytes + 1024
    assert b"bytes of output omitted: the log keeps 65536 bytes per seat" in log
    assert played.seats[0].log.total > 4 * LIMITS.log_bytes
    assert played.faults() == []


def test_an_unreadable_archive_forfeits(engine: Proc, remote_random: Proc) -> None:
    bad = Bundle("bot.zip", b"PK\x03\x04 not really a zip", "bot.py")
    played = play(engine, [bad], [remote_random.address])
    assert played.forfeit(0).startswith("not started: the archive cannot be read")
