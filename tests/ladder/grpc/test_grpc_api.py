"""The Ladder gRPC service over a real ``manage.py grpcserver``: auth, permissions, bad input."""

from __future__ import annotations

import io
import json
import os
import uuid
import zipfile
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from digdown.v1 import game_pb2, ladder_pb2_grpc
from digdown.v1 import ladder_pb2 as pb
from tests.ladder.grpc.conftest import LADDER_SERVICE, bearer, start_manage
from tests.support.scrape import free_port, scrape, total

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]

GOOD_PY = b"def act(obs):\n    return 0\n"
T = 10.0  # every call has a deadline


def refused(method: Any, request: Any, **kw: Any) -> grpc.RpcError:
    """Call and return the RpcError it must raise."""
    with pytest.raises(grpc.RpcError) as info:
        method(request, timeout=T, **kw)
    return info.value


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


def test_health_and_reflection_need_no_token(ladder_server: Any) -> None:
    with grpc.insecure_channel(ladder_server.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", LADDER_SERVICE):
            reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=T)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        refl = reflection_pb2_grpc.ServerReflectionStub(channel)
        replies = list(
            refl.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=T
            )
        )
        names = {s.name for s in replies[0].list_services_response.service}
        assert {LADDER_SERVICE, "grpc.health.v1.Health"} <= names


def test_tokens_and_ownership(stub: Any, user_token: Any) -> None:
    from ladder.accounts.models import ApiToken
    from ladder.accounts.services import token_revoke
    from ladder.bots.models import BotVersion

    alice, a_tok = user_token("alice")
    _bob, b_tok = user_token("bob")
    bot = stub.CreateBot(pb.CreateBotRequest(name="alpha", kind="HOSTED"), metadata=bearer(a_tok))
    assert (bot.bot.name, bot.bot.owner, bot.bot.kind) == ("alpha", "alice", "HOSTED")
    stub.UploadVersion(
        pb.UploadVersionRequest(bot="alpha", filename="bot.py", content=GOOD_PY),
        metadata=bearer(a_tok),
        timeout=T,
    )

    # No token, a malformed one, an unknown one: UNAUTHENTICATED on every write.
    writes = [
        (stub.CreateBot, pb.CreateBotRequest(name="beta", kind="HOSTED")),
        (
            stub.UploadVersion,
            pb.UploadVersionRequest(bot="alpha", filename="b.py", content=GOOD_PY),
        ),
        (stub.SetEndpoint, pb.SetEndpointRequest(bot="alpha", endpoint="127.0.0.1:1")),
        (stub.ListMyBots, pb.ListMyBotsRequest()),
        (stub.RequestChallenge, pb.RequestChallengeRequest(bot="alpha")),
    ]
    for md in ([], [("authorization", "Token abc")], bearer("ddl_not-a-token"), bearer("x")):
        for method, request in writes:
            err = refused(method, request, metadata=md)
            assert err.code() == grpc.StatusCode.UNAUTHENTICATED, (method, md, err.details())
            assert "token" in err.details()

    # Public reads work without a token (as on the REST API), but not with a bad one.
    board = stub.Leaderboard(pb.LeaderboardRequest(), timeout=T)
    assert [e.bot for e in board.entries] == ["alpha"]
    assert stub.ListMatches(pb.ListMatchesRequest(bot="alpha"), timeout=T).matches == []
    err = refused(stub.Leaderboard, pb.LeaderboardRequest(), metadata=bearer("ddl_nope"))
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED

    # Another user's bot: PERMISSION_DENIED, nothing changes.
    for method, request in writes[1:3] + writes[4:]:
        err = refused(method, request, metadata=bearer(b_tok))
        assert err.code() == grpc.StatusCode.PERMISSION_DENIED, (method, err.details())
        assert "another user" in err.details()
    mine = stub.ListMyBots(pb.ListMyBotsRequest(), metadata=bearer(b_tok), timeout=T)
    assert list(mine.bots) == []
    mine = stub.ListMyBots(pb.ListMyBotsRequest(), metadata=bearer(a_tok), timeout=T)
    assert [b.name for b in mine.bots] == ["alpha"]
    assert not mine.bots[0].HasField("current_version")  # v1 waits for its smoke match
    assert list(BotVersion.objects.filter(bot__name="alpha").values_list("number")) == [(1,)]

    # A revoked token stops working at once.
    token = ApiToken.objects.get(user=alice)
    token_revoke(user=alice, token_id=token.pk)
    err = refused(stub.ListMyBots, pb.ListMyBotsRequest(), metadata=bearer(a_tok))
    assert err.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "revoked" in err.details()


def test_staff_may_challenge_with_others_bots(stub: Any, user_token: Any) -> None:
    from ladder.bots.models import BotVersion
    from ladder.bots.services import bot_version_smoke_record

    _, a_tok = user_token("alice")
    _, s_tok = user_token("root", staff=True)
    for name in ("alpha", "beta"):
        stub.CreateBot(pb.CreateBotRequest(name=name, kind="HOSTED"), metadata=bearer(a_tok))
        stub.UploadVersion(
            pb.UploadVersionRequest(bot=name, filename="bot.py", content=GOOD_PY),
            metadata=bearer(a_tok),
            timeout=T,
        )
    for version in BotVersion.objects.all():  # as if each had passed its smoke match
        bot_version_smoke_record(version_id=version.pk, passed=True, outcome="passed", log=b"")
    reply = stub.RequestChallenge(
        pb.RequestChallengeRequest(bot="alpha", opponents=["beta"], difficulty="hard"),
        metadata=bearer(s_tok),
        timeout=T,
    )
    m = reply.match
    assert (m.status, m.difficulty, m.seed) == ("QUEUED", "hard", 0)  # seed secret until the end
    assert [s.bot for s in m.seats] == ["alpha", "beta"]
    # A match that has not finished has no replay yet: FAILED_PRECONDITION, as documented.
    err = refused(
        lambda r, **kw: list(stub.DownloadReplay(r, **kw)), pb.DownloadReplayRequest(match_id=m.id)
    )
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION, err.details()
    assert "only a finished match has a replay" in (err.details() or "")
    # The ladder picks an opponent when none is named.
    picked = stub.RequestChallenge(
        pb.RequestChallengeRequest(bot="beta"), metadata=bearer(a_tok), timeout=T
    ).match
    assert [s.bot for s in picked.seats] == ["beta", "alpha"]
    assert not picked.rated
    listed = stub.ListMatches(pb.ListMatchesRequest(bot="alpha", page_size=1), timeout=T)
    assert [x.id for x in listed.matches] == [picked.id] and listed.next_page_token
    rest = stub.ListMatches(
        pb.ListMatchesRequest(bot="alpha", page_size=1, page_token=listed.next_page_token),
        timeout=T,
    )
    assert [x.id for x in rest.matches] == [m.id] and not rest.next_page_token


def test_bad_input_gets_clear_statuses(stub: Any, user_token: Any) -> None:
    _, tok = user_token("alice")
    md = bearer(tok)
    stub.CreateBot(pb.CreateBotRequest(name="alpha", kind="HOSTED"), metadata=md, timeout=T)
    evil = zip_bytes({"../evil.py": b"", "bot.py": GOOD_PY})
    cases: list[tuple[Any, Any, grpc.StatusCode, str]] = [
        (stub.CreateBot, pb.CreateBotRequest(name="ALPHA", kind="HOSTED"),
         grpc.StatusCode.ALREADY_EXISTS, "already exists"),
        (stub.CreateBot, pb.CreateBotRequest(name="x", kind="HOSTED"),
         grpc.StatusCode.INVALID_ARGUMENT, "3-32 characters"),
        (stub.CreateBot, pb.CreateBotRequest(name="gamma", kind="LOCAL"),
         grpc.StatusCode.INVALID_ARGUMENT, "HOSTED, REMOTE or CONNECTED"),
        (stub.CreateBot, pb.CreateBotRequest(name="gamma", kind="REMOTE", endpoint="10.1.2.3:50"),
         grpc.StatusCode.INVALID_ARGUMENT, "private"),
        (stub.CreateBot, pb.CreateBotRequest(name="gamma", kind="REMOTE",
                                             endpoint="169.254.169.254:80"),
         grpc.StatusCode.INVALID_ARGUMENT, "link-local"),
        (stub.CreateBot, pb.CreateBotRequest(name="gamma", kind="REMOTE", endpoint="nohost"),
         grpc.StatusCode.INVALID_ARGUMENT, "host:port"),
        (stub.UploadVersion, pb.UploadVersionRequest(bot="alpha", filename="bot.py",
                                                     content=b"def act(:\n"),
         grpc.StatusCode.INVALID_ARGUMENT, "syntax error"),
        (stub.UploadVersion, pb.UploadVersionRequest(bot="alpha", filename="b.zip", content=evil),
         grpc.StatusCode.INVALID_ARGUMENT, "upload rejected"),
        (stub.UploadVersion, pb.UploadVersionRequest(bot="alpha", filename="", content=GOOD_PY),
         grpc.StatusCode.INVALID_ARGUMENT, "filename"),
        (stub.UploadVersion, pb.UploadVersionRequest(bot="nobody", filename="b.py"),
         grpc.StatusCode.NOT_FOUND, "no bot named"),
        (stub.UploadVersion, pb.UploadVersionRequest(bot="alpha", filename="big.py",
                                                     content=b"#" * (2 * 1024 * 1024)),
         grpc.StatusCode.RESOURCE_EXHAUSTED, ""),
        (stub.SetEndpoint, pb.SetEndpointRequest(bot="alpha", endpoint="127.0.0.1:5"),
         grpc.StatusCode.INVALID_ARGUMENT, "only remote bots"),
        (stub.RequestChallenge, pb.RequestChallengeRequest(bot="alpha", num_seats=5),
         grpc.StatusCode.INVALID_ARGUMENT, "2 to 4"),
        (stub.RequestChallenge, pb.RequestChallengeRequest(bot="alpha", opponents=["ghost"]),
         grpc.StatusCode.NOT_FOUND, "ghost"),
        (stub.RequestChallenge, pb.RequestChallengeRequest(bot="alpha"),
         grpc.StatusCode.FAILED_PRECONDITION, "other playable bots"),
        (stub.GetMatch, pb.GetMatchRequest(match_id=999999),
         grpc.StatusCode.NOT_FOUND, "no such match"),
        (stub.ListMatches, pb.ListMatchesRequest(bot="alpha", page_token="zz"),
         grpc.StatusCode.INVALID_ARGUMENT, "page_token"),
        (stub.Leaderboard, pb.LeaderboardRequest(page_size=-1),
         grpc.StatusCode.INVALID_ARGUMENT, "page_size"),
    ]  # fmt: skip
    for method, request, code, text in cases:
        err = refused(method, request, metadata=md)
        assert err.code() == code, (request, err.code(), err.details())
        assert text in (err.details() or ""), (request, err.details())
        assert "Traceback" not in (err.details() or "")
    # Nothing was stored by the refused calls.
    mine = stub.ListMyBots(pb.ListMyBotsRequest(), metadata=md, timeout=T)
    assert [(b.name, b.HasField("current_version")) for b in mine.bots] == [("alpha", False)]
    # A download of a match that does not exist is NOT_FOUND, streamed or not.
    stub.UploadVersion(
        pb.UploadVersionRequest(bot="alpha", filename="bot.py", content=GOOD_PY),
        metadata=md,
        timeout=T,
    )
    err = refused(
        lambda r, **kw: list(stub.DownloadReplay(r, **kw)), pb.DownloadReplayRequest(match_id=1)
    )
    assert err.code() == grpc.StatusCode.NOT_FOUND


def test_throttle_per_token_and_sigterm(
    ladder_env: dict[str, str], grpc_procdir: Path, user_token: Any
) -> None:
    _, a_tok = user_token("alice")
    _, b_tok = user_token("bob")
    metrics_port = free_port()
    server = start_manage(
        ["grpcserver", "--rate", "3/min", "--log-level", "INFO",
         "--metrics-port", str(metrics_port)],
        ladder_env, grpc_procdir, "grpcserver-throttled", health=LADDER_SERVICE,
    )  # fmt: skip
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = ladder_pb2_grpc.LadderStub(channel)
            for _ in range(3):
                stub.ListMyBots(pb.ListMyBotsRequest(), metadata=bearer(a_tok), timeout=T)
            err = refused(stub.ListMyBots, pb.ListMyBotsRequest(), metadata=bearer(a_tok))
            assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "rate limit" in err.details()
            # Another token has its own budget; health is never throttled.
            stub.ListMyBots(pb.ListMyBotsRequest(), metadata=bearer(b_tok), timeout=T)
            health = health_pb2_grpc.HealthStub(channel)
            for _ in range(5):
                health.Check(health_pb2.HealthCheckRequest(service=LADDER_SERVICE), timeout=T)
        # Its metrics count each call once by status; refusals by the limit too; probes not.
        samples = scrape(f"http://127.0.0.1:{metrics_port}/metrics")
        handled = "grpc_server_handled_total"
        assert total(samples, handled, grpc_method="ListMyBots", grpc_code="OK") == 4
        exhausted = total(
            samples, handled, grpc_method="ListMyBots", grpc_code="RESOURCE_EXHAUSTED"
        )
        assert exhausted == 1
        assert total(samples, "ladder_throttled_total", interface="grpc", limit="calls") == 1
        assert total(samples, handled, grpc_method="Check") == 0
        assert total(samples, "grpc_server_handling_seconds_count", grpc_method="ListMyBots") == 5
    finally:
        code = server.stop()
    assert code == 0, server.log()
    log = server.log()
    assert "received SIGTERM" in log and "stopped" in log
    assert "Traceback" not in log


def test_ruleset_data_needs_no_token(stub: Any) -> None:
    """GetRuleset serves the SDK's ruleset document, the same text the engine serves."""
    from digdown import rulesets

    default = stub.GetRuleset(game_pb2.GetRulesetRequest(), timeout=T)
    ladders = stub.ListLadders(pb.ListLaddersRequest(), timeout=T).ladders
    assert default.ruleset == next(lad.ruleset for lad in ladders if lad.is_default) == "dd-2"
    assert list(default.available) == rulesets.available() and "dd-1" in default.available
    assert default.json == rulesets.text(default.ruleset)
    dd1 = stub.GetRuleset(game_pb2.GetRulesetRequest(ruleset="dd-1"), timeout=T)
    assert json.loads(dd1.json)["cave"][0]["name"] == "Dirt"
    err = refused(stub.GetRuleset, game_pb2.GetRulesetRequest(ruleset="dd-0"))
    assert err.code() == grpc.StatusCode.NOT_FOUND and "known: dd-1" in (err.details() or "")


def redis_url() -> str:
    """The Redis the tests may use (LADDER_TEST_REDIS_URL); skipped without one, except in CI."""
    import redis

    url = os.environ.get("LADDER_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
    try:
        redis.Redis.from_url(url, socket_timeout=2).ping()
    except redis.RedisError as exc:
        if os.environ.get("CI") == "true":
            raise AssertionError(f"Redis at {url} is needed under CI=true: {exc}") from exc
        pytest.skip(f"no Redis at {url}")
    return url


def test_throttle_is_shared_by_every_process_through_redis(
    ladder_env: dict[str, str], grpc_procdir: Path, user_token: Any
) -> None:
    """Two grpcserver processes with LADDER_CACHE_URL count one token against one limit."""
    _, tok = user_token("alice")
    # A prefix of our own: other runs on the same Redis never share our counts.
    env = {
        **ladder_env,
        "LADDER_CACHE_URL": redis_url(),
        "LADDER_CACHE_PREFIX": f"t{uuid.uuid4().hex}",
    }
    servers = [
        start_manage(
            ["grpcserver", "--rate", "3/min"],
            env,
            grpc_procdir,
            f"shared-{i}",
            health=LADDER_SERVICE,
        )
        for i in range(2)
    ]
    try:
        channels = [grpc.insecure_channel(s.address) for s in servers]
        stubs = [ladder_pb2_grpc.LadderStub(c) for c in channels]
        for stub in (stubs[0], stubs[1], stubs[0]):
            stub.ListMyBots(pb.ListMyBotsRequest(), metadata=bearer(tok), timeout=T)
        err = refused(stubs[1].ListMyBots, pb.ListMyBotsRequest(), metadata=bearer(tok))
        assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.details()
        for channel in channels:
            channel.close()
    finally:
        codes = [s.stop() for s in servers]
    assert codes == [0, 0], [s.log() for s in servers]
