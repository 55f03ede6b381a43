"""A hosted seat's share of the machine: its cgroup (or rlimits), its CPU time, its end line.

Real sandboxes and real matches. The worker gives each seat a cgroup v2 of its own
where it can: with the memory, pids and cpu controllers delegated its limits are
there too ("cgroup" mode); where only cgroup v2 itself is writable, the cgroup
counts the seat's CPU time and kills it whole ("cgroup-accounting"); with none,
rlimits and /proc ("rlimits"). Every mode is played here; the full one only
where the machine delegates the controllers (a hybrid cgroup hierarchy, where
they sit in v1, cannot).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.support.processes import Proc
from tests.workers.sandbox.conftest import hostile_bundle
from tests.workers.sandbox.test_hostile import LIMITS, house, play, warm_worker  # noqa: F401
from workers.runner import TimeControl, run_match
from workers.runner.clock import charged_seconds
from workers.sandbox import SandboxConfig, SandboxLimits, hosted_seat
from workers.sandbox.cgroups import cgroup_support

pytestmark = pytest.mark.usefixtures("sandbox_ready")

NO_CGROUP = SandboxConfig(cgroup="/nonexistent-cgroup")
END = re.compile(
    r"\[sandbox\] ended: (?P<how>.+?); CPU (?P<cpu>[\d.]+) s, memory peak (?P<mib>[\d.]+) MiB "
    r"\((?P<mode>\w+) limits\)(?:; limit hit: (?P<hit>.+))?$",
    re.M,
)


def end_line(log: bytes) -> re.Match[str]:
    found = END.search(log.decode(errors="replace"))
    assert found, log.decode(errors="replace")[-800:]
    return found


def test_without_a_cgroup_the_seat_runs_on_rlimits_and_says_so(
    engine: Proc, remote_random: Proc
) -> None:
    support = cgroup_support(NO_CGROUP.cgroup)
    assert support.mode == "rlimits" and "not a cgroup v2 directory" in support.describe()
    with hosted_seat(house("starter"), LIMITS, NO_CGROUP) as seat:
        assert seat.cgroup is None
        run_match(engine.address, [seat.bot_spec(), remote_random.address], seed=2)
        assert (seat.cpu_seconds() or 0) > 0  # from /proc: its processes' ticks
    line = end_line(seat.log_bytes())
    assert line["mode"] == "rlimits" and float(line["cpu"]) > 0 and float(line["mib"]) > 1
    assert line["how"] == "stopped by the worker at the end of the match"


def test_a_seat_gets_its_own_cgroup_where_the_worker_has_one(
    engine: Proc, remote_random: Proc
) -> None:
    support = cgroup_support()
    if support.mode == "rlimits":
        pytest.skip(f"no writable cgroup v2 here: {support.why}")
    with hosted_seat(house("starter"), LIMITS) as seat:
        assert seat.cgroup is not None
        members = {int(p) for p in Path(seat.cgroup.procs).read_text().split()}
        assert set(seat.processes()) <= members and seat.init_pid in members
        before = seat.cpu_seconds()
        run_match(engine.address, [seat.bot_spec(), remote_random.address], seed=2)
        after = seat.cpu_seconds()
        assert before is not None and after is not None and after > before
        if support.mode == "cgroup":
            assert (seat.cgroup.path / "memory.max").read_text().strip() == str(LIMITS.memory_bytes)
            assert (seat.cgroup.path / "pids.max").read_text().strip() == str(LIMITS.processes)
            assert (seat.cgroup.path / "cpu.max").read_text().split()[0] == "100000"
        path = seat.cgroup.path
    assert not path.exists()  # removed with the seat
    line = end_line(seat.log_bytes())
    assert line["mode"] == ("cgroup" if support.mode == "cgroup" else "rlimits")


def test_full_cgroup_limits_where_the_controllers_are_delegated(engine: Proc) -> None:
    support = cgroup_support()
    if support.mode != "cgroup":
        pytest.skip(f"memory, pids and cpu controllers not delegated here: {support.describe()}")
    limits = SandboxLimits(start_s=30.0, processes=32)
    played = play(engine, [hostile_bundle("fork_bomb"), house("random")], limits=limits)
    line = end_line(played.log(0))
    assert line["mode"] == "cgroup" and "pids.max" in (line["hit"] or "")


def test_a_killed_bot_s_end_line_names_the_limit(engine: Proc) -> None:
    limits = SandboxLimits(start_s=60.0, cpu_s=2)
    played = play(engine, [hostile_bundle("busy", where="start"), house("random")], limits=limits)
    line = end_line(played.log(0))
    assert "killed by SIGXCPU" in line["how"]
    assert "RLIMIT_CPU (2 s)" in (line["hit"] or "")
    assert float(line["cpu"]) >= 1.5  # it spun until the limit


TC = TimeControl(decision_s=0.25, bank_s=0.5, handshake_s=10.0)


@pytest.mark.parametrize("clock", ["cpu", "wall"])
def test_a_bot_that_sleeps_pays_for_its_sleep_on_either_clock(
    engine: Proc, remote_random: Proc, clock: str
) -> None:
    """0.45 s of sleep per decision against a 0.25 s deadline: sleeping is the bot's own
    doing, not a wait for a CPU, so the CPU clock charges it too (three timeouts)."""
    tc = TimeControl(**{**TC.__dict__, "hosted_clock": clock})
    with hosted_seat(hostile_bundle("thinker", sleep_s=0.45), LIMITS) as seat:
        outcome = run_match(
            engine.address, [seat.bot_spec(), remote_random.address], seed=4, time_control=tc
        )
    stats = outcome.seats[0]
    assert stats["clock"] == clock and stats["cpu_s"] is not None
    assert [f.kind for f in outcome.faults if f.seat == 0][:3] == ["timeout"] * 3
    asked = [d for d in outcome.replay["decisions"] if d.get("seat") == 0 and "wall_ms" in d]
    assert asked and all({"cpu_ms", "wait_ms"} <= d.keys() for d in asked)
    assert all(d["cpu_ms"] < d["wall_ms"] for d in asked)
    answered = [d for d in asked if "action" in d]
    if clock == "cpu":  # charged (nearly) all its wall time: it was asleep, not waiting
        assert all(d["think_time_ms"] >= d["wall_ms"] - d["wait_ms"] - 1 for d in answered)


def test_the_cpu_clock_does_not_charge_waits_for_a_cpu() -> None:
    """The charge itself: wall time without the waits for a CPU, never below CPU time."""
    assert charged_seconds(wall_s=0.9, cpu_s=0.3, waited_s=0.6) == pytest.approx(0.3)
    assert charged_seconds(wall_s=0.9, cpu_s=0.3, waited_s=0.0) == pytest.approx(0.9)  # slept
    assert charged_seconds(wall_s=0.5, cpu_s=0.8, waited_s=0.5) == pytest.approx(0.8)  # threads
    assert charged_seconds(wall_s=0.5, cpu_s=0.1, waited_s=2.0) == pytest.approx(0.1)


def test_a_bot_that_computes_is_charged_its_cpu_time(engine: Proc, remote_random: Proc) -> None:
    tc = TimeControl(**{**TC.__dict__, "hosted_clock": "cpu"})
    with hosted_seat(hostile_bundle("thinker", spin_s=0.4), LIMITS) as seat:
        outcome = run_match(
            engine.address, [seat.bot_spec(), remote_random.address], seed=4, time_control=tc
        )
    # 0.4 s of CPU against a 0.25 s deadline: the bank runs out, then three timeouts.
    assert [f.kind for f in outcome.faults if f.seat == 0][:3] == ["timeout"] * 3
    answered = [d for d in outcome.replay["decisions"] if d.get("seat") == 0 and "action" in d]
    assert answered and answered[0]["cpu_ms"] >= 350
    assert all(d["think_time_ms"] >= d["cpu_ms"] for d in answered)  # charged its CPU time


def test_remote_seats_are_charged_wall_time(engine: Proc, remote_random: Proc) -> None:
    tc = TimeControl(**{**TC.__dict__, "hosted_clock": "cpu"})
    with hosted_seat(house("starter"), LIMITS) as seat:
        outcome = run_match(
            engine.address, [seat.bot_spec(), remote_random.address], seed=4, time_control=tc
        )
    assert outcome.seats[0]["clock"] == "cpu" and outcome.seats[1]["clock"] == "wall"
    remote = [d for d in outcome.replay["decisions"] if d.get("seat") == 1 and "wall_ms" in d]
    assert remote and all("cpu_ms" not in d for d in remote)
    assert os.environ.get("CI") != "true" or outcome.seats[0]["cpu_s"] is not None
