"""The Ladder gRPC service limits failed authentication per client address (unknown
tokens are refused before their lookup once an address is over its limit), and neither
that limit nor the anonymous throttle believes a client's own x-forwarded-for."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import grpc
import pytest

from digdown.v1 import ladder_pb2 as pb
from digdown.v1 import ladder_pb2_grpc
from tests.ladder.grpc.conftest import LADDER_SERVICE, bearer, start_manage

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]
T = 10.0


def code_of(call: Any, request: Any, metadata: list[tuple[str, str]]) -> grpc.StatusCode:
    try:
        call(request, metadata=metadata, timeout=T)
    except grpc.RpcError as err:
        return err.code()
    return grpc.StatusCode.OK


def test_unknown_tokens_are_limited_per_address(
    ladder_env: dict[str, str], grpc_procdir: Path, user_token: Any
) -> None:
    _, token = user_token("alice")
    env = {**ladder_env, "LADDER_AUTH_FAILURES_PER_ADDRESS": "5/15min"}
    server = start_manage(
        ["grpcserver", "--rate", "0"], env, grpc_procdir, "grpc-auth-limit", health=LADDER_SERVICE
    )
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = ladder_pb2_grpc.LadderStub(channel)
            mine = pb.ListMyBotsRequest()
            guesses = [
                code_of(
                    stub.ListMyBots,
                    mine,
                    # A new x-forwarded-for per call: not a new client without trusted proxies.
                    [
                        *bearer("ddl_" + secrets.token_urlsafe(32)),
                        ("x-forwarded-for", f"9.9.9.{i}"),
                    ],
                )
                for i in range(8)
            ]
            after = code_of(stub.ListMyBots, mine, bearer(token))
            # Every answer names its request id, the one its log lines carry.
            _, call = stub.Leaderboard.with_call(
                pb.LeaderboardRequest(), metadata=[("x-request-id", "grpc-req-00042")], timeout=T
            )
            assert ("x-request-id", "grpc-req-00042") in call.trailing_metadata()
            public = code_of(stub.Leaderboard, pb.LeaderboardRequest(), [])
    finally:
        assert server.stop() == 0, server.log()
    unauth, limited = grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.RESOURCE_EXHAUSTED
    assert guesses == [unauth] * 5 + [limited] * 3
    assert after == limited  # refused before the lookup, valid or not
    assert public == grpc.StatusCode.OK  # reads that need no token are not authentication
    assert "failed authentications" in server.log() and "Traceback" not in server.log()
    assert "[grpc-req-00042]: Leaderboard ok in" in server.log()


def test_anonymous_throttle_ignores_forwarded_for(
    ladder_env: dict[str, str], grpc_procdir: Path, transactional_db: Any
) -> None:
    server = start_manage(
        ["grpcserver", "--rate", "3/min"], ladder_env, grpc_procdir, "grpc-anon-rate",
        health=LADDER_SERVICE,
    )  # fmt: skip
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = ladder_pb2_grpc.LadderStub(channel)
            codes = [
                code_of(
                    stub.Leaderboard, pb.LeaderboardRequest(), [("x-forwarded-for", f"7.7.7.{i}")]
                )
                for i in range(4)
            ]
    finally:
        assert server.stop() == 0, server.log()
    assert codes == [grpc.StatusCode.OK] * 3 + [grpc.StatusCode.RESOURCE_EXHAUSTED]
