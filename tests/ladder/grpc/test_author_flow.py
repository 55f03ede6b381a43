"""A bot author's whole flow over gRPC, with real processes from end to end.

grpcserver (manage.py) + two SDK bots on loopback + ``manage.py playmatch``
(which queues the match; a Celery worker, which starts its own engine, plays
it) + a separate engine that re-verifies the replay downloaded over the
Ladder service.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from digdown.v1 import ladder_pb2 as pb
from tests.ladder.grpc.conftest import bearer, manage
from tests.support import replay_schema
from tests.support.processes import closed_port_address, start_bot
from tests.support.workers import Worker, start_worker
from workers.runner import verify_replay

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(90)]
T = 10.0


@pytest.fixture
def sdk_bots(grpc_procdir: Path) -> Any:
    heuristic = start_bot("examples.heuristic_bot", grpc_procdir, "flow-heuristic")
    rand = start_bot("examples.random_bot", grpc_procdir, "flow-random", "--seed", "3")
    yield heuristic, rand
    heuristic.stop()
    rand.stop()


def test_bot_author_flow(
    stub: Any,
    user_token: Any,
    sdk_bots: Any,
    ladder_env: dict[str, str],
    ladder_engine: Any,
    worker_env: dict[str, str],
    ladder_worker: Worker,
) -> None:
    heuristic, rand = sdk_bots
    _, tok = user_token("alice")
    md = bearer(tok)

    # A remote bot registered with its endpoint at creation.
    digger = stub.CreateBot(
        pb.CreateBotRequest(name="digger", kind="REMOTE", endpoint=heuristic.address),
        metadata=md,
        timeout=T,
    ).bot
    assert (digger.kind, digger.endpoint, digger.rating) == ("REMOTE", heuristic.address, 1500.0)

    # A hosted bot: the archive is validated and stored as version 1, pending its smoke
    # match (test_hosted_flow.py plays those).
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("bot.py", "from helper import pick\n\ndef act(obs):\n    return pick(obs)\n")
        z.writestr("helper.py", "def pick(obs):\n    return 0\n")
    archive = buf.getvalue()
    stub.CreateBot(pb.CreateBotRequest(name="uploaded", kind="HOSTED"), metadata=md, timeout=T)
    version = stub.UploadVersion(
        pb.UploadVersionRequest(bot="uploaded", filename="mybot.zip", content=archive),
        metadata=md,
        timeout=T,
    ).version
    assert (version.number, version.status, version.size) == (1, "PENDING", len(archive))
    assert version.sha256 == hashlib.sha256(archive).hexdigest()
    stored = list(Path(ladder_env["LADDER_MEDIA_ROOT"]).rglob(version.filename))
    assert len(stored) == 1 and stored[0].read_bytes() == archive

    # A second remote bot whose endpoint is set afterwards.
    stub.CreateBot(pb.CreateBotRequest(name="dice", kind="REMOTE"), metadata=md, timeout=T)
    dice = stub.SetEndpoint(
        pb.SetEndpointRequest(bot="dice", endpoint=rand.address), metadata=md, timeout=T
    ).bot
    assert dice.endpoint == rand.address
    mine = stub.ListMyBots(pb.ListMyBotsRequest(), metadata=md, timeout=T).bots
    assert [b.name for b in mine] == ["dice", "digger", "uploaded"]

    # A version that has not passed its smoke match is never seated.
    refused = manage(["playmatch", "--bots", "digger,uploaded"], ladder_env)
    assert refused.returncode != 0
    # (or, on a machine without bubblewrap, no hosted bot at all)
    assert any(why in refused.stderr for why in ("no valid version yet", "cannot run here"))
    assert "Traceback" not in refused.stderr

    # Play the remote ones for real: playmatch queues the match and follows it until the
    # worker (with an engine of its own) has played and recorded it.
    played = manage(["playmatch", "--bots", "digger,dice", "--seed", "11"], worker_env)
    assert played.returncode == 0, played.stdout + played.stderr + ladder_worker.log()
    assert "finished" in played.stdout and "rank 1" in played.stdout, played.stdout
    assert "running on" in played.stdout, played.stdout

    # The leaderboard shows both, ratings moved and their sum is conserved.
    board = {e.bot: e for e in stub.Leaderboard(pb.LeaderboardRequest(), timeout=T).entries}
    assert set(board) == {"digger", "dice", "uploaded"}
    assert board["digger"].games == board["dice"].games == 1
    assert board["uploaded"].games == 0
    assert board["digger"].rating + board["dice"].rating == pytest.approx(3000.0)
    assert board["digger"].rating != 1500.0
    assert board["digger"].wins + board["dice"].wins == 1
    assert sorted(e.position for e in board.values()) == [1, 2, 3]
    # One game: provisional, with the wide interval of the documented model (±681/√1).
    digger = board["digger"]
    assert digger.provisional and board["uploaded"].provisional
    assert digger.interval_low == pytest.approx(digger.rating - 681, abs=1)
    assert digger.interval_high == pytest.approx(digger.rating + 681, abs=1)
    assert board["uploaded"].interval_low == board["uploaded"].interval_high == 0

    # The match, listed and in detail (public: no token needed).
    listed = stub.ListMatches(pb.ListMatchesRequest(bot="dice"), timeout=T).matches
    assert len(listed) == 1
    match = stub.GetMatch(pb.GetMatchRequest(match_id=listed[0].id), timeout=T).match
    assert (match.status, match.seed, match.rated) == ("FINISHED", 11, True)
    assert match.end_reason in {"won", "last_standing", "cave_exhausted", "turn_limit"}
    assert [s.bot for s in match.seats] == ["digger", "dice"]
    assert sorted(s.rank for s in match.seats) == [1, 2]
    for seat in match.seats:
        assert seat.rating_before == 1500.0 and seat.rating_after == board[seat.bot].rating
    assert match.replay_size > 0 and len(match.replay_sha256) == 64

    # The replay, streamed in chunks, is the recorded file and verifies on a real engine.
    chunks = list(stub.DownloadReplay(pb.DownloadReplayRequest(match_id=match.id), timeout=T))
    first = chunks[0]
    assert (first.total_size, first.sha256, first.content_type) == (
        match.replay_size,
        match.replay_sha256,
        "application/gzip",
    )
    offset = 0
    for chunk in chunks:
        assert chunk.offset == offset
        offset += len(chunk.data)
    data = b"".join(c.data for c in chunks)
    assert len(data) == match.replay_size
    assert hashlib.sha256(data).hexdigest() == match.replay_sha256
    doc = json.loads(gzip.decompress(data))
    # It is the format docs/replay-format.md describes (not ProtoJSON of digdown.v1.Replay).
    replay_schema.check(doc)
    verdict = verify_replay(ladder_engine.address, doc, timeout_s=T)
    assert verdict.ok, verdict.first_difference


def test_playmatch_rechecks_endpoints_before_dialing(
    stub: Any,
    user_token: Any,
    sdk_bots: Any,
    ladder_env: dict[str, str],
    grpc_procdir: Path,
    tmp_path: Path,
) -> None:
    """Registered while loopback was allowed; refused at play time once it is not."""
    from ladder.matches.models import Match

    heuristic, rand = sdk_bots
    _, tok = user_token("alice")
    for name, proc in (("near", heuristic), ("far", rand)):
        stub.CreateBot(
            pb.CreateBotRequest(name=name, kind="REMOTE", endpoint=proc.address),
            metadata=bearer(tok),
            timeout=T,
        )
    # A worker of its own (own broker) that no longer allows loopback endpoints.
    strict = {**ladder_env, "LADDER_DEV_MODE": "0", "LADDER_BROKER_DIR": str(tmp_path)}
    worker = start_worker(strict, grpc_procdir, "strict-worker")
    try:
        run = manage(["playmatch", "--bots", "near,far"], strict)
    finally:
        assert worker.stop() == 0, worker.log()
    assert run.returncode != 0
    assert "its endpoint was refused by the endpoint check" in run.stderr, run.stderr + worker.log()
    assert "Traceback" not in run.stderr
    match = Match.objects.get()
    # The public error names no address; the owner reads why in the seat's log.
    assert match.status == Match.Status.ERRORED and "refused" in match.error
    assert "127.0.0.1" not in match.error and "loopback" not in match.error
    note = stub.GetSeatLog(
        pb.GetSeatLogRequest(match_id=match.pk, seat=0), metadata=bearer(tok), timeout=T
    )
    assert "loopback addresses are not allowed" in note.text and heuristic.address in note.text
    assert not match.seats.filter(rating_after__isnull=False).exists()
    unknown = manage(["playmatch", "--bots", "near,ghost"], ladder_env)
    assert unknown.returncode != 0 and "no bot named 'ghost'" in unknown.stderr


def test_playmatch_says_why_a_seat_forfeited(
    stub: Any, user_token: Any, sdk_bots: Any, worker_env: dict[str, str], ladder_worker: Worker
) -> None:
    """A registered bot that is down forfeits; playmatch prints the reason next to it."""
    heuristic, _ = sdk_bots
    _, tok = user_token("carol")
    for name, endpoint in (("alive", heuristic.address), ("gone", closed_port_address())):
        stub.CreateBot(
            pb.CreateBotRequest(name=name, kind="REMOTE", endpoint=endpoint),
            metadata=bearer(tok),
            timeout=T,
        )
    run = manage(["playmatch", "--bots", "alive,gone", "--seed", "5"], worker_env)
    assert run.returncode == 0, run.stdout + run.stderr
    (line,) = [x for x in run.stdout.splitlines() if " gone " in x]
    assert "forfeited" in line and "(unreachable: nothing listens at" in line, run.stdout
