"""Per-user quotas over gRPC: RESOURCE_EXHAUSTED naming the limit (REST: test_quotas.py).

The shared grpcserver runs with the default quotas; the rows that use them up
are made through the services first, so one call more is the one refused.
"""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from django.conf import settings

from digdown.v1 import ladder_pb2 as pb
from ladder.bots.services import bot_create
from ladder.matches.creation import match_create
from tests.ladder.grpc.conftest import bearer
from tests.ladder.grpc.test_grpc_api import GOOD_PY, T, refused

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(60)]


def test_bots_per_user(stub: Any, user_token: Any) -> None:
    user, secret = user_token("grpc-many")
    for i in range(settings.LADDER_QUOTA_BOTS_PER_USER):
        bot_create(owner=user, name=f"grpc-many-{i}", kind="hosted")
    err = refused(
        stub.CreateBot, pb.CreateBotRequest(name="one-more", kind="HOSTED"), metadata=bearer(secret)
    )
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.details()
    assert "LADDER_QUOTA_BOTS_PER_USER" in err.details() and "bots per user" in err.details()
    _, boss = user_token("grpc-boss", staff=True)
    for i in range(settings.LADDER_QUOTA_BOTS_PER_USER + 1):
        stub.CreateBot(
            pb.CreateBotRequest(name=f"grpc-boss-{i}", kind="HOSTED"),
            metadata=bearer(boss),
            timeout=T,
        )


def test_open_challenges(stub: Any, user_token: Any, make_bot: Any) -> None:
    user, secret = user_token("grpc-challenger")
    mine = make_bot(user, "grpc-mine")
    rival = make_bot(user_token("grpc-rival")[0], "grpc-rival")
    for _ in range(settings.LADDER_QUOTA_OPEN_CHALLENGES):
        match_create(bot_ids=[mine.pk, rival.pk], requested_by=user)
    err = refused(
        stub.RequestChallenge,
        pb.RequestChallengeRequest(bot="grpc-mine", opponents=["grpc-rival"]),
        metadata=bearer(secret),
    )
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.details()
    assert "LADDER_QUOTA_OPEN_CHALLENGES" in err.details()


def test_stored_bytes(stub: Any, user_token: Any, settings: Any) -> None:
    _, secret = user_token("grpc-bytes")
    stub.CreateBot(
        pb.CreateBotRequest(name="grpc-heavy", kind="HOSTED"), metadata=bearer(secret), timeout=T
    )
    stub.UploadVersion(
        pb.UploadVersionRequest(bot="grpc-heavy", filename="bot.py", content=GOOD_PY),
        metadata=bearer(secret),
        timeout=T,
    )
    from ladder.bots.models import BotVersion

    # As if the stored version were as large as the whole quota.
    BotVersion.objects.filter(bot__name="grpc-heavy").update(
        archive_size=settings.LADDER_QUOTA_BYTES_PER_USER
    )
    err = refused(
        stub.UploadVersion,
        pb.UploadVersionRequest(bot="grpc-heavy", filename="bot.py", content=GOOD_PY + b"#\n"),
        metadata=bearer(secret),
    )
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.details()
    assert "LADDER_QUOTA_BYTES_PER_USER" in err.details()


def test_comparisons_still_being_played(stub: Any, user_token: Any, make_bot: Any) -> None:
    from ladder.bots.services import bot_version_smoke_record, bot_version_upload
    from ladder.tournaments.services import comparison_create

    user, secret = user_token("grpc-comparer")
    mine = make_bot(user, "grpc-compared")
    second = bot_version_upload(user=user, bot_id=mine.pk, filename="bot.py", data=GOOD_PY + b"#\n")
    bot_version_smoke_record(version_id=second.pk, passed=True, outcome="passed", log=b"")
    rival = make_bot(user_token("grpc-comp-rival")[0], "grpc-comp-rival")
    for _ in range(settings.LADDER_COMPARISONS_OPEN_PER_USER):
        comparison_create(
            user=user,
            bot_id=mine.pk,
            old_version=1,
            new_version=2,
            opponent_ids=[rival.pk],
            deals=2,
        )
    err = refused(
        stub.CompareVersions,
        pb.CompareVersionsRequest(
            bot="grpc-compared",
            old_version=1,
            new_version=2,
            opponents=["grpc-comp-rival"],
            deals=2,
        ),
        metadata=bearer(secret),
    )
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err.details()
    assert "LADDER_COMPARISONS_OPEN_PER_USER" in err.details()
