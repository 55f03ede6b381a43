"""Connected bots play full rated matches through the workers, with no listening port.

Real processes: Redis, ``grpcserver`` (Play streams and the relay), a Celery
worker (relaying each decision to the stream), bot processes that only dial out.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from typing import Any

import grpc
import pytest

from digdown.v1 import ladder_pb2 as pb
from digdown.v1 import ladder_pb2_grpc
from tests.ladder.grpc.conftest import bearer, manage
from tests.ladder.grpc.connected.conftest import listening_sockets, wait_connected
from tests.support.matches import needed
from tests.support.processes import ROOT
from tests.support.workers import wait_until

NODE_DIR = ROOT / "examples" / "node"

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]
T = 10.0


def ladder_stub(address: str) -> Any:
    return ladder_pb2_grpc.LadderStub(grpc.insecure_channel(address))


def create_connected(stub: Any, token: str, *names: str) -> None:
    for name in names:
        bot = stub.CreateBot(
            pb.CreateBotRequest(name=name, kind="CONNECTED"), metadata=bearer(token), timeout=T
        ).bot
        assert bot.kind == "CONNECTED" and bot.active


def play(env: dict[str, str], *bots: str, unrated: bool = False) -> tuple[int, str]:
    args = ["playmatch", "--bots", ",".join(bots), "--seed", "11", "--timeout", "150"]
    done = manage(args + (["--unrated"] if unrated else []), env, timeout_s=180)
    out = done.stdout + done.stderr
    found = re.search(r"match (\d+):", out)
    assert found, out
    return int(found.group(1)), out if done.returncode == 0 else f"FAILED {out}"


def test_connected_bots_play_rated_matches_without_a_port(
    server_a: Any, connect_worker: Any, connect_env: dict[str, str], user_token: Any,
    start_connected: Any,
) -> None:  # fmt: skip
    from ladder.matches.models import MatchSeat

    _, alice = user_token("alice")
    stub = ladder_stub(server_a.address)
    create_connected(stub, alice, "plug", "plug2")
    one = start_connected("plug", alice, server_a.address)
    two = start_connected("plug2", alice, server_a.address)
    wait_connected(one)
    wait_connected(two)
    assert listening_sockets(one.proc.pid) == [] and listening_sockets(two.proc.pid) == []
    match_id, out = play(connect_env, "plug", "plug2")
    assert "FAILED" not in out, out + connect_worker.log()[-3000:]
    seats = list(MatchSeat.objects.filter(match_id=match_id).order_by("seat"))
    assert sorted(s.rank for s in seats) in ([1, 2], [1, 1]), out
    assert all(not s.forfeit_reason for s in seats), out
    assert all(s.rating_after is not None for s in seats)  # rated
    # The end of the match arrives on the stream too.
    wait_until(lambda: f"match {match_id} finished" in one.log(), 20, "the match end on the stream")
    assert listening_sockets(one.proc.pid) == []


def test_the_node_example_plays_connected(
    server_a: Any, connect_worker: Any, connect_env: dict[str, str], user_token: Any,
    start_connected: Any,
) -> None:  # fmt: skip
    from ladder.matches.models import MatchSeat

    node = shutil.which("node")
    needed("node (Debian package nodejs)", node is not None)
    needed("examples/node/node_modules (npm ci)", (NODE_DIR / "node_modules").is_dir())
    _, carol = user_token("carol")
    stub = ladder_stub(server_a.address)
    create_connected(stub, carol, "nodeplug", "pyplug")
    js = start_connected("nodeplug", carol, server_a.address, node=True)
    py = start_connected("pyplug", carol, server_a.address)
    wait_connected(js)
    wait_connected(py)
    assert listening_sockets(js.proc.pid) == []
    match_id, out = play(connect_env, "nodeplug", "pyplug")
    assert "FAILED" not in out, out + js.log()
    seats = {s.bot.name: s for s in MatchSeat.objects.filter(match_id=match_id)}
    assert seats["nodeplug"].faults == 0 and not seats["nodeplug"].forfeit_reason, out
    wait_until(lambda: f"match {match_id} finished" in js.log(), 20, "the match end, in Node")
    assert js.stop() == 0 and "SIGTERM: closing the stream" in js.log()


def _snippet(language: str, after: str) -> str:
    """The first ``language`` code block after the line containing ``after`` in the guide."""
    text = (ROOT / "docs" / "writing-a-bot.md").read_text()
    rest = text[text.index(after) :]
    start = rest.index(f"```{language}\n") + len(f"```{language}\n")
    return rest[start : rest.index("```", start)]


def test_the_guides_minimal_bots_play_as_written(
    server_a: Any, connect_worker: Any, connect_env: dict[str, str], user_token: Any,
    grpc_procdir: Any,
) -> None:  # fmt: skip
    """The two minimal connected bots of docs/writing-a-bot.md, run as printed (only the
    ladder's address and the bot's name swapped), play a match against each other."""
    from ladder.matches.models import MatchSeat

    needed("node (Debian package nodejs)", shutil.which("node") is not None)
    needed("examples/node/node_modules (npm ci)", (NODE_DIR / "node_modules").is_dir())
    _, lee = user_token("lee")
    create_connected(ladder_stub(server_a.address), lee, "docpy", "docjs")
    python = _snippet("python", "A minimal connected bot in Python")
    js = _snippet("js", "A minimal connected bot in JavaScript")
    swap = {"ladder.example.org:50052": server_a.address}
    for old, new in swap.items():
        python, js = python.replace(old, new), js.replace(old, new)
    python = python.replace('"digger"', '"docpy"')
    js = js.replace("'digger'", "'docjs'").replace("['protos']", json.dumps([str(ROOT / "protos")]))
    (grpc_procdir / "doc_bot.py").write_text(python)
    (NODE_DIR / "doc_bot.test.js").write_text(js)
    env = {**connect_env, "DIGDOWN_TOKEN": lee}
    procs = []
    try:
        with (grpc_procdir / "doc-bots.log").open("wb") as out:
            procs.append(subprocess.Popen(
                [sys.executable, str(grpc_procdir / "doc_bot.py")], cwd=ROOT, env=env,
                stdout=out, stderr=subprocess.STDOUT))  # fmt: skip
            procs.append(subprocess.Popen(
                ["node", "doc_bot.test.js"], cwd=NODE_DIR, env=env,
                stdout=out, stderr=subprocess.STDOUT))  # fmt: skip
        from ladder.bots import presence
        from ladder.bots.models import Bot

        ids = [Bot.objects.get(name=n).pk for n in ("docpy", "docjs")]
        wait_until(lambda: presence.connected_bot_ids(ids) == set(ids), 30, "both connected")
        match_id, out = play(connect_env, "docpy", "docjs")
        assert "FAILED" not in out, out + (grpc_procdir / "doc-bots.log").read_text()
        seats = list(MatchSeat.objects.filter(match_id=match_id))
        assert all(s.faults == 0 and not s.forfeit_reason for s in seats), out
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(10)
        (NODE_DIR / "doc_bot.test.js").unlink(missing_ok=True)


def test_the_cpp_example_plays_connected(
    server_a: Any, connect_worker: Any, connect_env: dict[str, str], user_token: Any,
    grpc_procdir: Any, start_connected: Any,
) -> None:  # fmt: skip
    """examples/cpp (Debian's gRPC, protos/ only) connects out and plays a rated match."""
    from ladder.matches.models import MatchSeat
    from tests.ladder.grpc.connected.conftest import BotProcess
    from tests.support.cpp_example import cpp_bot

    binary = cpp_bot()
    _, cy = user_token("cy-cpp")
    create_connected(ladder_stub(server_a.address), cy, "cppplug", "pyfoil")
    log_path = grpc_procdir / "bot-cppplug.log"
    env = {**connect_env, "DIGDOWN_TOKEN": cy}
    with log_path.open("wb") as out:
        proc = subprocess.Popen(
            [str(binary), "--connect", server_a.address, "--bot", "cppplug"],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env,
        )  # fmt: skip
    cpp = BotProcess(proc, log_path)
    try:
        py = start_connected("pyfoil", cy, server_a.address)
        wait_connected(cpp)
        wait_connected(py)
        assert listening_sockets(proc.pid) == []
        match_id, out = play(connect_env, "cppplug", "pyfoil")
        assert "FAILED" not in out, out + cpp.log()
        seats = {s.bot.name: s for s in MatchSeat.objects.filter(match_id=match_id)}
        assert seats["cppplug"].faults == 0 and not seats["cppplug"].forfeit_reason, out
        assert seats["cppplug"].rating_after is not None
        wait_until(lambda: f"match {match_id} finished" in cpp.log(), 20, "the match end, in C++")
    finally:
        assert cpp.stop() == 0, cpp.log()
    assert "closing the stream" in cpp.log()
