"""Full matches through gRPC: engine and bots are real processes on loopback.

Short deadlines (0.2 s per decision, 0.3 s bank) keep misbehaving bots cheap;
every match must still complete, with the faults and forfeits rules §6 asks for,
and its replay must re-verify on the engine.
"""

from __future__ import annotations

import gzip
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import replay_schema
from tests.support.processes import ROOT, Proc, closed_port_address, start_bot, start_engine
from workers.runner import (
    BotSpec,
    EngineUnavailable,
    NoSeatPlayed,
    TimeControl,
    run_match,
    verify_replay,
)
from workers.runner import replay as replay_io

FAST = TimeControl(
    decision_s=0.2, bank_s=0.3, handshake_s=2.0, engine_timeout_s=5.0, engine_resume_s=1.0
)


def play(engine: Proc, bots: list[str], tmp_path: Path, seed: int = 1, **kw: object):
    out = tmp_path / "replay.json.gz"
    outcome = run_match(
        engine.address,
        bots,
        seed=seed,
        difficulty="normal",
        time_control=kw.pop("time_control", FAST),
        out=out,
        verify=True,
        **kw,
    )  # type: ignore[arg-type]
    assert outcome.verified is True
    assert out.exists()
    replay_schema.check(replay_io.read(out))  # every replay, faults and forfeits included
    return outcome


def seat_result(outcome, seat: int) -> dict:
    return outcome.result["seats"][seat]


def test_full_match_replay_verifies(engine: Proc, random_bots: list[Proc], tmp_path: Path) -> None:
    outcome = play(engine, [b.address for b in random_bots], tmp_path, seed=11)
    assert sorted(outcome.ranks)[0] == 1 and len(outcome.ranks) == 3
    assert outcome.faults == []
    doc = replay_io.read(tmp_path / "replay.json.gz")
    assert doc["format"] == "digdown-replay/1"
    assert doc["config"] == {"ruleset": "dd-1", "seed": 11, "num_seats": 3, "difficulty": "normal"}
    assert [s["bot"] for s in doc["seats"]] == ["random"] * 3
    assert [s["address"] for s in doc["seats"]] == [b.address for b in random_bots]
    assert len(doc["cave"]) == 4 and doc["events"][-1]["kind"] == "GAME_END"
    asked = [d for d in doc["decisions"] if "action" in d and not d["forced"]]
    assert len(asked) == outcome.decisions > 0
    # The file itself (not the in-memory document) re-verifies.
    assert verify_replay(engine.address, doc).ok
    # A tampered file does not.
    doc["result"]["ranks"] = [*reversed(doc["result"]["ranks"]), 9]
    assert not verify_replay(engine.address, doc).ok


def test_slow_bot_spends_bank_then_faults_and_forfeits(
    engine: Proc, random_bots: list[Proc], tmp_path: Path
) -> None:
    slow = start_bot("slow_bot.py", tmp_path, "slow", "--sleep", "1.0", "--after", "1")
    bots = [slow.address, random_bots[0].address, random_bots[1].address]
    try:
        outcome = play(engine, bots, tmp_path)
    finally:
        slow.stop()
    mine = [f for f in outcome.faults if f.seat == 0]
    assert [f.kind for f in mine] == ["timeout"] * 3
    # The first late answer was waited for through the whole bank (0.2 + 0.3 s) and spent
    # it; the next ones only through the deadline. Lower bounds only: a loaded machine
    # makes any answer later, never earlier.
    assert mine[0].think_time_ms >= 450
    assert all(f.think_time_ms >= 150 for f in mine[1:])
    assert outcome.seats[0]["bank_left_ms"] == 0
    sr = seat_result(outcome, 0)
    assert sr["ended"] == "forfeited" and sr["faults"] == 3
    faults = [d for d in outcome.replay["decisions"] if d["seat"] == 0 and "fault" in d]
    assert len(faults) == 3 and all(d["fault"].startswith("timeout") for d in faults)


def test_bank_absorbs_small_overruns(engine: Proc, random_bots: list[Proc], tmp_path: Path) -> None:
    slow = start_bot("slow_bot.py", tmp_path, "slow", "--sleep", "0.3", "--count", "4")
    tc = TimeControl(decision_s=0.2, bank_s=1.0, handshake_s=2.0)
    try:
        outcome = play(
            engine, [slow.address, random_bots[0].address], tmp_path, seed=3, time_control=tc
        )
    finally:
        slow.stop()
    stats = outcome.seats[0]
    assert [f for f in outcome.faults if f.seat == 0] == []
    assert stats["decisions"] > 4
    # Four answers at least 0.1 s late: at least 0.4 s of the bank spent, exactly what the
    # runner measured (the think times it recorded), the rest kept.
    thinks = [d["think_time_ms"] for d in outcome.replay["decisions"] if d["seat"] == 0]
    overruns = [t - 200 for t in thinks if t > 200]
    assert len(overruns) >= 4, thinks
    assert abs(stats["bank_left_ms"] - (1000 - sum(overruns))) <= len(overruns) + 1, stats
    assert 0 < stats["bank_left_ms"] <= 600 + len(overruns), stats


def test_crashing_bot_forfeits_at_once(
    engine: Proc, random_bots: list[Proc], tmp_path: Path
) -> None:
    crash = start_bot("crash_bot.py", tmp_path, "crash", "--after", "2")
    try:
        outcome = play(
            engine,
            [random_bots[0].address, crash.address, random_bots[1].address],
            tmp_path,
            seed=5,
        )
        assert crash.proc.wait(5) == 3
    finally:
        crash.stop()
    mine = [f for f in outcome.faults if f.seat == 1]
    assert len(mine) == 1 and mine[0].forfeit and mine[0].kind == "dead", mine
    sr = seat_result(outcome, 1)
    assert sr["ended"] == "forfeited" and sr["rank"] == 3
    assert outcome.seats[1]["decisions"] == 3  # two answers, then the crash


def test_illegal_actions_fault_three_times(
    engine: Proc, random_bots: list[Proc], tmp_path: Path
) -> None:
    bad = start_bot("illegal_bot.py", tmp_path, "illegal")
    try:
        outcome = play(engine, [random_bots[0].address, bad.address], tmp_path, seed=8)
    finally:
        bad.stop()
    assert [f.kind for f in outcome.faults] == ["illegal"] * 3
    assert "COMMIT" in outcome.faults[0].reason
    assert seat_result(outcome, 1)["ended"] == "forfeited"
    assert seat_result(outcome, 0)["rank"] == 1


@pytest.mark.parametrize("protocol", [1, 2])
@pytest.mark.parametrize(
    ("mode", "kind"),
    [("garbage", "malformed"), ("huge", "too_large"), ("empty", "malformed"), ("raise", "error")],
)
def test_bad_replies_are_faults(
    engine: Proc, random_bots: list[Proc], tmp_path: Path, mode: str, kind: str, protocol: int
) -> None:
    """The same faults by unary Act and over an ActStream (protocol 2)."""
    bad = start_bot(
        "raw_bot.py", tmp_path, f"raw-{mode}", "--mode", mode, "--protocol", str(protocol)
    )
    try:
        outcome = play(engine, [bad.address, random_bots[0].address], tmp_path, seed=2)
        assert bad.alive()  # a huge reply did not take anything down
    finally:
        bad.stop()
    assert outcome.replay["seats"][0]["protocol_version"] == protocol
    assert [f.kind for f in outcome.faults] == [kind] * 3, outcome.faults
    assert all(len(f.reason) <= 220 for f in outcome.faults)  # hostile text is bounded
    assert seat_result(outcome, 0)["ended"] == "forfeited"
    assert outcome.replay["seats"][0]["bot"] == f"raw-{mode}"


def test_a_refused_stream_falls_back_to_unary_act(
    engine: Proc, random_bots: list[Proc], tmp_path: Path
) -> None:
    """A bot that offers protocol 2 but refuses ActStream is asked by Act, without a fault."""
    bot = start_bot("raw_bot.py", tmp_path, "raw-refuse", "--mode", "refuse", "--protocol", "2")
    try:
        outcome = play(engine, [bot.address, random_bots[0].address], tmp_path, seed=3)
    finally:
        bot.stop()
    assert outcome.faults == []
    assert outcome.seats[0]["decisions"] > 0


def test_bot_closing_connections_faults(
    engine: Proc, random_bots: list[Proc], tmp_path: Path
) -> None:
    closer = start_bot("closer_bot.py", tmp_path, "closer", grpc_bot=False)
    try:
        outcome = play(
            engine,
            [closer.address, random_bots[0].address, random_bots[1].address],
            tmp_path,
            seed=4,
        )
    finally:
        closer.stop()
    mine = [f for f in outcome.faults if f.seat == 0]
    # Something still listens, so it is not a dead bot: three faults, then the engine forfeits.
    assert len(mine) == 3 and all(not f.forfeit for f in mine), mine
    assert {f.kind for f in mine} <= {"unavailable", "timeout"}
    assert seat_result(outcome, 0)["ended"] == "forfeited"
    assert outcome.seats[0]["handshake"] != "ok"


def test_unreachable_bot_forfeits_before_play(
    engine: Proc, random_bots: list[Proc], tmp_path: Path
) -> None:
    gone = closed_port_address()
    tc = TimeControl(decision_s=0.2, bank_s=0.3, handshake_s=0.5)
    outcome = play(
        engine,
        [random_bots[0].address, gone, random_bots[1].address],
        tmp_path,
        seed=6,
        time_control=tc,
    )
    assert len(outcome.faults) == 1
    f = outcome.faults[0]
    assert (f.seat, f.kind, f.forfeit) == (1, "unreachable", True)
    assert seat_result(outcome, 1)["ended"] == "forfeited"
    assert seat_result(outcome, 1)["rank"] == 3
    assert outcome.seats[1]["decisions"] == 0


def test_a_match_where_no_seat_can_play_is_not_played(engine: Proc, tmp_path: Path) -> None:
    """Every seat unreachable: no result (errored, unrated by the ladder), not forfeits in
    seat order that hand the last seat a win with no decision (the bug: it was rated)."""
    tc = TimeControl(decision_s=0.2, bank_s=0.3, handshake_s=0.5)
    gone = [closed_port_address() for _ in range(3)]
    with pytest.raises(NoSeatPlayed) as err:
        run_match(engine.address, gone, seed=6, time_control=tc, out=tmp_path / "r.json.gz")
    assert "no seat could play" in str(err.value) and "seat 2" in str(err.value)
    assert not (tmp_path / "r.json.gz").exists()


def test_hosted_bot_liveness_callback(
    engine: Proc, random_bots: list[Proc], tmp_path: Path
) -> None:
    """A worker that knows the bot's process forfeits it as soon as the process is gone."""
    bot = start_bot("examples.random_bot", tmp_path, "hosted")
    bot.stop(signal.SIGKILL)
    specs = [BotSpec(bot.address, is_alive=bot.alive), BotSpec(random_bots[0].address)]
    outcome = play(
        engine,
        specs,
        tmp_path,
        seed=9,
        time_control=TimeControl(decision_s=0.2, bank_s=0.3, handshake_s=0.3),
    )
    assert [(f.seat, f.forfeit) for f in outcome.faults] == [(0, True)]
    assert "exited" in outcome.faults[0].reason


def test_engine_killed_mid_match_is_retryable_and_writes_nothing(
    random_bots: list[Proc], tmp_path: Path
) -> None:
    engine = start_engine(tmp_path, "doomed-engine")
    out = tmp_path / "out" / "replay.json.gz"

    def kill_at(ply: int) -> None:
        if ply >= 5 and engine.alive():
            engine.stop(signal.SIGKILL)

    try:
        with pytest.raises(EngineUnavailable) as info:
            run_match(
                engine.address,
                [b.address for b in random_bots],
                seed=1,
                time_control=FAST,
                out=out,
                on_progress=kill_at,
            )
    finally:
        engine.stop(signal.SIGKILL)
    assert info.value.retryable
    assert not out.exists()
    assert not out.parent.exists() or list(out.parent.iterdir()) == []


def test_unix_socket_bot(engine: Proc, random_bots: list[Proc], tmp_path: Path) -> None:
    sock = tmp_path / "bot.sock"
    proc = subprocess.Popen(
        [sys.executable, "-m", "examples.random_bot", "--listen", f"unix:{sock}"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        outcome = play(
            engine,
            [f"unix:{sock}", random_bots[0].address],
            tmp_path,
            seed=12,
            time_control=TimeControl(decision_s=0.5, bank_s=1, handshake_s=10),
        )
        assert outcome.faults == [] and outcome.seats[0]["handshake"] == "ok"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(5) == 0  # graceful stop on SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def test_cli_play_and_verify(engine: Proc, random_bots: list[Proc], tmp_path: Path) -> None:
    out = tmp_path / "cli.json.gz"
    cmd = [
        sys.executable,
        "-m",
        "workers.play",
        "--engine",
        engine.address,
        *[x for b in random_bots[:2] for x in ("--bot", b.address)],
        "--seed",
        "21",
        "--difficulty",
        "hard",
        "--out",
        str(out),
    ]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "rank 1" in done.stdout
    verify = [sys.executable, "-m", "workers.play", "verify", "--engine", engine.address]
    done = subprocess.run([*verify, str(out)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    # A tampered replay fails with exit code 1.
    doc = json.loads(gzip.decompress(out.read_bytes()))
    doc["decisions"] = doc["decisions"][:-3]
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes(gzip.compress(json.dumps(doc).encode()))
    done = subprocess.run([*verify, str(bad)], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, (done.stdout, done.stderr)


def test_heuristic_bot_over_the_protocol_and_no_leaks(
    engine: Proc, random_bots: list[Proc], tmp_path: Path
) -> None:
    """engine/players' HeuristicPlayer behind the SDK; channels are per match and closed
    (a channel per call leaks threads)."""
    import os
    import threading

    heuristic = start_bot("examples.heuristic_bot", tmp_path, "heuristic")
    try:
        bots = [heuristic.address, random_bots[0].address]
        play(engine, bots, tmp_path, seed=30)  # warm-up: grpc's own threads start once
        fds, threads = len(os.listdir("/proc/self/fd")), threading.active_count()
        for seed in (31, 32, 33):
            outcome = play(engine, bots, tmp_path, seed=seed)
            assert outcome.faults == []
            assert outcome.replay["seats"][0]["bot"] == "heuristic"
        # A leak grows with every match (5 channels each); closing is asynchronous
        # inside grpc, so give it a moment and allow a little slack.
        deadline = time.monotonic() + 3.0
        while len(os.listdir("/proc/self/fd")) > fds + 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(os.listdir("/proc/self/fd")) <= fds + 4
        assert threading.active_count() <= threads + 4
    finally:
        heuristic.stop()


def test_cli_without_engine_starts_its_own_and_help_names_verify(
    random_bots: list[Proc], tmp_path: Path
) -> None:
    bots = [x for b in random_bots[:2] for x in ("--bot", b.address)]
    cmd = [sys.executable, "-m", "workers.play", *bots, "--seed", "4", "--verify"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    assert "replay verified: True" in done.stdout
    helped = subprocess.run(
        [sys.executable, "-m", "workers.play", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert helped.returncode == 0 and "verify" in helped.stdout, helped.stdout
