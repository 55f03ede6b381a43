"""The launcher's own contracts: refusal without a sandbox, unsafe development mode,
the wall-clock kill, the capped log and the unpacking of uploads."""

from __future__ import annotations

import io
import os
import time
import zipfile
from pathlib import Path

import pytest

from examples.hosted_bundle import build
from tests.support.processes import Proc
from workers.runner import run_match
from workers.sandbox import (
    Bundle,
    BundleError,
    SandboxConfig,
    SandboxLimits,
    SandboxUnavailable,
    hosted_seat,
)
from workers.sandbox.capture import CappedLog

NO_BWRAP = SandboxConfig(bwrap="no-such-bubblewrap")
STARTER = Bundle(*build("starter"))


def test_without_a_sandbox_hosted_bots_are_refused_with_the_reason() -> None:
    with pytest.raises(SandboxUnavailable) as err, hosted_seat(STARTER, config=NO_BWRAP):
        pass
    message = str(err.value)
    assert "no-such-bubblewrap) is not installed" in message
    assert "unsafe development mode" in message


def test_unsafe_development_mode_runs_the_bot_without_isolation(
    engine: Proc, remote_random: Proc
) -> None:
    config = SandboxConfig(bwrap="no-such-bubblewrap", unsafe_dev_mode=True)
    with hosted_seat(STARTER, SandboxLimits(start_s=30.0), config) as seat:
        assert seat.mode == "unsafe" and not seat.start_error
        outcome = run_match(engine.address, [seat.bot_spec(), remote_random.address], seed=2)
        pid = seat.proc.pid if seat.proc else 0
    assert outcome.result["ranks"] and not outcome.faults
    assert b"[sandbox] UNSAFE development mode: this bot runs WITHOUT any isolation" in (
        seat.log_bytes()
    )
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.usefixtures("sandbox_ready")
def test_the_wall_clock_limit_kills_the_seat() -> None:
    with hosted_seat(STARTER, SandboxLimits(start_s=30.0, wall_s=1.0)) as seat:
        assert not seat.start_error
        deadline = time.monotonic() + 30
        while seat.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not seat.is_alive()
        assert seat.processes() == []
    assert b"[sandbox] killed: wall-clock limit reached" in seat.log_bytes()
    assert seat.ended.startswith("killed by SIGKILL")


def test_the_log_keeps_its_head_and_tail_and_says_what_it_dropped() -> None:
    log = CappedLog(100)
    log.write(b"a" * 50)
    assert log.getvalue() == b"a" * 50 + b"\n" and not log.truncated
    log.write(b"b" * 1000)
    log.write(b"c" * 10)
    log.note("done")
    value = log.getvalue()
    assert value.startswith(b"a" * 50 + b"b" * 25)
    assert b"960 bytes of output omitted: the log keeps 100 bytes per seat" in value
    assert value.endswith(b"b" * 15 + b"c" * 10 + b"\n[sandbox] done\n")
    assert log.truncated and log.total == 1060


def _zip(entries: dict[str, bytes], *, link: str = "") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
        if link:
            info = zipfile.ZipInfo(link)
            info.external_attr = 0o120777 << 16
            zf.writestr(info, "/etc/passwd")
    return buf.getvalue()


@pytest.mark.parametrize(
    "data, why",
    [
        (_zip({"../evil.py": b"x"}), "unsafe path"),
        (_zip({"/abs.py": b"x"}), "unsafe path"),
        (_zip({"bot.py": b"x"}, link="link.py"), "not a regular file"),
        (_zip({"main.py": b"x"}), "entry point bot.py is not in the archive"),
        (b"PK\x03\x04garbage", "cannot be read"),
    ],
)
def test_unpacking_refuses_what_could_leave_its_directory(
    tmp_path: Path, data: bytes, why: str
) -> None:
    with pytest.raises(BundleError, match=why):
        Bundle("bot.zip", data, "bot.py").unpack(tmp_path)
    assert not (tmp_path.parent / "evil.py").exists()


def test_unpacking_caps_the_unpacked_size(tmp_path: Path) -> None:
    data = _zip({"bot.py": b"x", "big.bin": b"\0" * 10_000})
    with pytest.raises(BundleError, match="more than 5000"):
        Bundle("bot.zip", data, "bot.py").unpack(tmp_path, max_bytes=5000)
