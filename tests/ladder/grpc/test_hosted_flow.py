"""A hosted bot's whole flow over gRPC: upload, smoke match, a ladder match, its logs.

Real processes throughout: grpcserver, a Celery worker (it plays the smoke
matches sent when the uploads commit, and the match ``manage.py playmatch``
queues, hosted seats in the real sandbox) and a remote SDK bot on loopback.
Logs go to the bot's owner and staff only.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Any

import grpc
import pytest

from digdown.v1 import ladder_pb2 as pb
from examples.hosted_bundle import build
from tests.ladder.grpc.conftest import bearer, manage
from tests.support.processes import Proc, start_bot
from tests.support.sandbox import require_sandbox
from tests.support.workers import start_worker, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]
T = 10.0
CRASHER = b'raise SystemExit("this bot refuses to start")\n'


@pytest.fixture
def remote_random(grpc_procdir: Path) -> Any:
    p = start_bot("examples.random_bot", grpc_procdir, "hosted-flow-random", "--seed", "5")
    yield p
    p.stop()


def code_of(call: Any) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as err:
        call()
    return err.value.code()


@pytest.fixture
def hosted_worker(ladder_env: dict[str, str], grpc_procdir: Path) -> Any:
    """A worker on the grpcserver's own broker: it plays what the ladder sends."""
    worker = start_worker(ladder_env, grpc_procdir, "hosted-flow-worker")
    yield worker
    assert worker.stop() == 0, worker.log()


def test_hosted_bot_flow_over_grpc(
    stub: Any,
    user_token: Any,
    ladder_env: dict[str, str],
    hosted_worker: Any,
    remote_random: Proc,
) -> None:
    require_sandbox()
    _, alice = user_token("alice")
    _, bob = user_token("bob")
    _, root = user_token("root", staff=True)
    md = bearer(alice)
    for name in ("heur", "broke"):
        stub.CreateBot(pb.CreateBotRequest(name=name, kind="HOSTED"), metadata=md, timeout=T)
    filename, data = build("heuristic")
    uploaded = stub.UploadVersion(
        pb.UploadVersionRequest(bot="heur", filename=filename, content=data), metadata=md, timeout=T
    ).version
    assert (uploaded.status, uploaded.smoke_outcome) == ("PENDING", "")
    stub.UploadVersion(
        pb.UploadVersionRequest(bot="broke", filename="bot.py", content=CRASHER),
        metadata=md,
        timeout=T,
    )

    def smoked(bot: str) -> Any:
        log = stub.GetVersionLog(pb.GetVersionLogRequest(bot=bot, version=1), metadata=md)
        return log if log.status != "PENDING" else None

    # The worker plays each smoke match as soon as its upload is committed.
    good = wait_until(lambda: smoked("heur"), 120, "heur's smoke match", poll_s=0.5)
    assert good.status == "VALID" and good.outcome.startswith("passed: rank")
    failed = wait_until(lambda: smoked("broke"), 120, "broke's smoke match", poll_s=0.5)
    assert failed.outcome == "failed: not started: the bot exited with status 1"
    assert "[sandbox] serving after" in good.text and good.size == len(good.text.encode())
    bad = stub.GetVersionLog(pb.GetVersionLogRequest(bot="broke", version=1), metadata=md)
    assert bad.status == "INVALID" and "this bot refuses to start" in bad.text
    mine = {b.name: b for b in stub.ListMyBots(pb.ListMyBotsRequest(), metadata=md).bots}
    assert mine["heur"].current_version.status == "VALID"
    assert not mine["broke"].HasField("current_version")  # nothing it could play

    request = pb.GetVersionLogRequest(bot="heur", version=1)
    assert code_of(lambda: stub.GetVersionLog(request, metadata=bearer(bob))) == (
        grpc.StatusCode.PERMISSION_DENIED
    )
    assert code_of(lambda: stub.GetVersionLog(request)) == grpc.StatusCode.UNAUTHENTICATED
    assert stub.GetVersionLog(request, metadata=bearer(root)).text == good.text

    # A ladder match between the hosted bot (in the sandbox) and a remote one.
    stub.CreateBot(
        pb.CreateBotRequest(name="dice", kind="REMOTE", endpoint=remote_random.address),
        metadata=md,
        timeout=T,
    )
    args = ["playmatch", "--bots", "heur,dice", "--seed", "7"]
    played = manage(args, ladder_env, timeout_s=120)
    assert played.returncode == 0, played.stdout + played.stderr
    match_id = int(re.search(r"match (\d+): heur vs dice", played.stdout).group(1))  # type: ignore[union-attr]
    seat_log = stub.GetSeatLog(pb.GetSeatLogRequest(match_id=match_id, seat=0), metadata=md)
    assert (seat_log.bot, seat_log.version, seat_log.seat) == ("heur", 1, 0)
    assert "bot heuristic 1 listening on unix:/run/bot/bot.sock" in seat_log.text
    assert seat_log.size == len(seat_log.text.encode())
    seat0 = pb.GetSeatLogRequest(match_id=match_id, seat=0)
    assert code_of(lambda: stub.GetSeatLog(seat0, metadata=bearer(bob))) == (
        grpc.StatusCode.PERMISSION_DENIED
    )
    # The remote seat's log is the runner's note: which endpoint was dialed (owner only).
    remote_seat = pb.GetSeatLogRequest(match_id=match_id, seat=1)
    note = stub.GetSeatLog(remote_seat, metadata=md, timeout=T)
    assert remote_random.address in note.text and "[sandbox]" not in note.text
    assert code_of(lambda: stub.GetSeatLog(remote_seat, metadata=bearer(bob))) == (
        grpc.StatusCode.PERMISSION_DENIED
    )

    # Never in the public replay.
    chunks = stub.DownloadReplay(pb.DownloadReplayRequest(match_id=match_id), timeout=T)
    replay = gzip.decompress(b"".join(c.data for c in chunks))
    assert b"[sandbox]" not in replay and b"listening on unix" not in replay
