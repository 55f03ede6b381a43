"""``make run HOST=...`` (no Redis) plays a connected bot from another machine, as its
banner says: the bot is created with the printed ``curl`` line and connected with the
printed ``python -m digdown.connect`` line, run in another network namespace (it
reaches the ladder only at the address ``--host`` named), and the matchmaker seats it
in rated matches. Before, ``make run`` bound 127.0.0.1 only and ``Play`` answered
FAILED_PRECONDITION "this ladder runs without Redis"."""

from __future__ import annotations

import json
import re
import shlex
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.stack.test_make_run import RUN_TIMEOUT_S, command, leftovers, run_env
from tests.support.netns_pair import NetnsPair, NetnsUnavailable
from tests.support.processes import ROOT

pytestmark = pytest.mark.timeout(600)


def rated_seats(var_dir: Path, bot: str) -> int:
    with sqlite3.connect(var_dir / "ladder.sqlite3") as db:
        (n,) = db.execute(
            "SELECT count(*) FROM matches_matchseat s JOIN bots_bot b ON b.id = s.bot_id "
            "WHERE b.name = ? AND s.rating_after IS NOT NULL AND s.forfeit_reason = ''",
            (bot,),
        ).fetchone()
    return int(n)


def test_make_run_on_an_address_plays_a_bot_connected_from_elsewhere(tmp_path: Path) -> None:
    pair = NetnsPair("run")
    try:
        pair.open()
    except NetnsUnavailable as exc:
        pair.close()
        pytest.skip(str(exc))
    proc = subprocess.Popen(
        command("--host", pair.host_ip), cwd=ROOT, env=run_env(tmp_path),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    seen: list[str] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            seen.append(line)

    threading.Thread(target=read, daemon=True).start()
    bot = None
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while "connect a bot that runs elsewhere" not in "".join(seen):
            assert proc.poll() is None and time.monotonic() < deadline, "".join(seen)[-3000:]
            time.sleep(0.2)
        time.sleep(1.0)  # the rest of the banner
        out = "".join(seen)
        curl = re.search(r"^\s+curl -H 'Authorization: Bearer (\S+)' -d name=mybot"
                         r" -d kind=connected (\S+)$", out, re.M)  # fmt: skip
        connect = re.search(r"^\s+DIGDOWN_TOKEN=(\S+) (python -m digdown.connect .+)$", out, re.M)
        assert curl and connect, out
        assert pair.host_ip in curl[2] and pair.host_ip in connect[2]
        request = urllib.request.Request(
            curl[2], data=urllib.parse.urlencode({"name": "mybot", "kind": "connected"}).encode(),
            headers={"Authorization": f"Bearer {curl[1]}"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=30) as reply:
            assert reply.status == 201 and json.loads(reply.read())["name"] == "mybot"
        argv = shlex.split(connect[2])
        argv[0] = sys.executable  # "python" of the banner: this venv's
        log_path = tmp_path / "mybot.log"
        with log_path.open("wb") as log:
            bot = subprocess.Popen(
                [*pair.exec_prefix(), *argv], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                env={**run_env(tmp_path), "DIGDOWN_TOKEN": connect[1]},
            )  # fmt: skip
        while rated_seats(tmp_path, "mybot") < 2:
            assert bot.poll() is None, log_path.read_text()
            assert proc.poll() is None, "".join(seen)[-3000:]
            assert time.monotonic() < deadline + 240, log_path.read_text()[-3000:]
            time.sleep(1.0)
        assert "connected to " in log_path.read_text()
        proc.send_signal(signal.SIGINT)
        proc.wait(RUN_TIMEOUT_S)
    finally:
        if bot is not None and bot.poll() is None:
            bot.terminate()
            bot.wait(20)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        pair.close()
    assert proc.returncode == 0, "".join(seen)[-3000:]
    assert leftovers(tmp_path) == []
