"""The quotas hold over gRPC when many calls arrive at once (REST: test_concurrent_limits.py).

The shared grpcserver (a real process, a thread per call) runs with the default
quotas; the rows that use all but a few of them are made through the services
first, then 10 calls released together by a barrier ask for more: exactly the
few that were left get through, the rest RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from django.conf import settings

from digdown.v1 import ladder_pb2 as pb
from ladder.bots.models import Bot
from ladder.bots.services import bot_create, bot_version_smoke_record, bot_version_upload
from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.tournaments.models import VersionComparison
from tests.ladder.grpc.conftest import bearer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sqlite_too,
              pytest.mark.timeout(180)]  # fmt: skip
N = 10
T = 60.0


def burst(call: Callable[[int], Any]) -> list[str]:
    """``call(i)`` from N threads released together: each one's status name."""
    barrier = threading.Barrier(N)
    codes = [""] * N

    def run(i: int) -> None:
        barrier.wait(timeout=60)
        try:
            call(i)
            codes[i] = "OK"
        except grpc.RpcError as exc:
            codes[i] = exc.code().name

    threads = [threading.Thread(target=run, args=(i,)) for i in range(N)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert set(codes) <= {"OK", "RESOURCE_EXHAUSTED"}, codes
    return codes


def _hosted(owner: Any, name: str) -> Bot:
    bot = bot_create(owner=owner, name=name, kind="hosted")
    v = bot_version_upload(
        user=owner, bot_id=bot.pk, filename="bot.py", data=b"def act(o):\n  return 0\n"
    )
    bot_version_smoke_record(version_id=v.pk, passed=True, outcome="passed", log=b"")
    return bot


def test_bots_per_user_at_once(stub: Any, user_token: Any) -> None:
    user, secret = user_token("burst-bots")
    limit = settings.LADDER_QUOTA_BOTS_PER_USER
    for i in range(limit - 2):
        bot_create(owner=user, name=f"burst-bots-{i}", kind="hosted")

    def create(i: int) -> Any:
        request = pb.CreateBotRequest(name=f"burst-more-{i}", kind="HOSTED")
        return stub.CreateBot(request, metadata=bearer(secret), timeout=T)

    codes = burst(create)
    assert codes.count("OK") == 2, codes
    assert Bot.objects.filter(owner=user).count() == limit


def test_open_challenges_at_once(stub: Any, user_token: Any) -> None:
    user, secret = user_token("burst-challenger")
    rival, _ = user_token("burst-rival")
    mine, theirs = _hosted(user, "burst-mine"), _hosted(rival, "burst-theirs")
    limit = settings.LADDER_QUOTA_OPEN_CHALLENGES
    for _ in range(limit - 3):
        match_create(bot_ids=[mine.pk, theirs.pk], requested_by=user, rated=False)
    request = pb.RequestChallengeRequest(bot=mine.name, opponents=[theirs.name], rated=False)
    codes = burst(lambda i: stub.RequestChallenge(request, metadata=bearer(secret), timeout=T))
    assert codes.count("OK") == 3, codes
    assert Match.objects.filter(requested_by=user).count() == limit


def test_comparisons_at_once(stub: Any, user_token: Any) -> None:
    user, secret = user_token("burst-comparer")
    rival, _ = user_token("burst-opponent")
    mine, theirs = _hosted(user, "burst-compared"), _hosted(rival, "burst-opp")
    v2 = bot_version_upload(
        user=user, bot_id=mine.pk, filename="bot.py", data=b"def act(o):\n  return 1\n"
    )
    bot_version_smoke_record(version_id=v2.pk, passed=True, outcome="passed", log=b"")
    request = pb.CompareVersionsRequest(
        bot=mine.name, old_version=1, new_version=2, opponents=[theirs.name], deals=2
    )
    codes = burst(lambda i: stub.CompareVersions(request, metadata=bearer(secret), timeout=T))
    limit = settings.LADDER_COMPARISONS_OPEN_PER_USER
    assert codes.count("OK") == limit, codes
    assert VersionComparison.objects.filter(requested_by=user).count() == limit
