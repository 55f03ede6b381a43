"""Compile bombs and crafted archives over the Ladder gRPC service: INVALID_ARGUMENT with
the reason, the server unharmed, nothing stored."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from digdown.v1 import ladder_pb2 as pb
from tests.ladder.bots.test_uploads import raw_name_zip
from tests.ladder.grpc.conftest import bearer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]
T = 30.0

BOMBS = {
    "bot.py": (b"x = " + b"1+" * 200_000 + b"1\n", "bot.py: too deeply nested"),
    "minus.py": (b"x = " + b"-" * 500_000 + b"1\n", "minus.py: too deeply nested"),
    "nul.zip": (raw_name_zip(b"ok.py\x00../../evil.sh"), "NUL in name"),
}


@pytest.mark.parametrize("filename", sorted(BOMBS))
def test_hostile_upload_is_invalid_argument(stub: Any, user_token: Any, filename: str) -> None:
    _, tok = user_token("mallory")
    stub.CreateBot(pb.CreateBotRequest(name="bomber", kind="HOSTED"), metadata=bearer(tok))
    content, reason = BOMBS[filename]
    with pytest.raises(grpc.RpcError) as err:
        stub.UploadVersion(
            pb.UploadVersionRequest(bot="bomber", filename=filename, content=content),
            metadata=bearer(tok),
            timeout=T,
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert reason in (err.value.details() or "")
    mine = stub.ListMyBots(pb.ListMyBotsRequest(), metadata=bearer(tok), timeout=T).bots
    assert [b.name for b in mine] == ["bomber"] and not mine[0].HasField("current_version")
