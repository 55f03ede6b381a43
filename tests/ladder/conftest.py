"""Fixtures for the ladder tests: isolated media storage, users, bots, finished matches."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from rest_framework.test import APIClient

from tests.support import server_errors

HIGH_RATES = {"anon": "100000/min", "user": "100000/min"}


@pytest.fixture(autouse=True)
def _ladder_settings(settings: Any, tmp_path: Any) -> None:
    """Each test gets its own media root, one ladder (``dd-1``, the default: the ladder
    tests are about the mechanics, whatever ruleset the product defaults to; tests of
    several ladders configure them), and throttles and failure limits it will not hit
    (counted afresh: the tests' cache is this process's memory)."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.LADDER_LADDERS = {"dd-1": {"ruleset": "dd-1", "difficulty": "normal", "seats": (2, 4)}}
    settings.LADDER_DEFAULT_LADDER = "dd-1"
    settings.LADDER_DEV_MODE = False
    settings.LADDER_ENDPOINT_ALLOWED_NETWORKS = []
    rf = dict(settings.REST_FRAMEWORK)
    rf["DEFAULT_THROTTLE_RATES"] = dict(HIGH_RATES)
    settings.REST_FRAMEWORK = rf
    settings.LADDER_AUTH_FAILURES_PER_ADDRESS = "100000/min"
    settings.LADDER_AUTH_FAILURES_PER_ACCOUNT = "100000/min"
    cache.clear()


@pytest.fixture(autouse=True)
def _no_server_errors(request: pytest.FixtureRequest, settings: Any) -> Iterator[None]:
    """Any 5xx answer of the API fails the test (mark ``allow_5xx`` to expect one)."""
    settings.MIDDLEWARE = ["tests.support.server_errors.ServerErrorGuard", *settings.MIDDLEWARE]
    server_errors.SEEN.clear()
    yield
    if request.node.get_closest_marker("allow_5xx") is None and server_errors.SEEN:
        pytest.fail(f"the server answered 5xx: {server_errors.SEEN}")


@pytest.fixture(scope="session", autouse=True)
def _database_is_real(django_db_setup: Any, django_db_blocker: Any) -> None:
    """CI must exercise the database it was told to use; never fall back silently."""
    with django_db_blocker.unblock():
        vendor = connection.vendor
    wanted = "postgresql" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "sqlite"
    assert vendor == wanted, f"tests run on {vendor}, DATABASE_URL asks for {wanted}"


def make_replay(match_id: int, extra: str = "") -> bytes:
    return gzip.compress(
        json.dumps({"format": "digdown-record/1", "match": match_id, "x": extra}).encode(), mtime=0
    )


def make_result(ranks: Sequence[int]) -> dict[str, Any]:
    """An engine Result dict (docs/engine-api.md) for the given ranks."""
    winners = [i for i, r in enumerate(ranks) if r == 1]
    return {
        "reason": "won",
        "winner": winners[0] if len(winners) == 1 else -1,
        "turns": 30,
        "rounds": 3,
        "ranks": list(ranks),
        "seats": [
            {
                "seat": i,
                "rank": r,
                "objectives": 4,
                "completed": [],
                "loot_points": 10 - r,
                "torches": 1,
                "faults": 0,
                "ended": "won" if r == 1 else "finished",
                "reason": "",
            }
            for i, r in enumerate(ranks)
        ],
    }


@pytest.fixture
def make_user(db: Any) -> Callable[..., Any]:
    from ladder.accounts.models import User

    def _make(username: str, *, staff: bool = False, password: str = "pw-12345678") -> Any:
        return User.objects.create_user(username=username, password=password, is_staff=staff)

    return _make


@pytest.fixture
def make_bot(db: Any) -> Callable[..., Any]:
    """A hosted bot with one valid version, created through the services.

    The version is recorded as having passed its smoke match (the real one, in the
    sandbox, is tests/ladder/bots/test_hosted.py's business).
    """
    from ladder.bots.services import bot_create, bot_version_smoke_record, bot_version_upload

    def _make(owner: Any, name: str) -> Any:
        bot = bot_create(owner=owner, name=name, kind="hosted")
        version = bot_version_upload(
            user=owner, bot_id=bot.pk, filename="bot.py", data=b"def act(obs):\n    return 0\n"
        )
        bot_version_smoke_record(
            version_id=version.pk, passed=True, outcome="passed (fixture)", log=b""
        )
        return bot

    return _make


@pytest.fixture
def api() -> APIClient:
    return APIClient()


@pytest.fixture
def token_for() -> Callable[[Any], str]:
    from ladder.accounts.services import token_create

    def _make(user: Any) -> str:
        return token_create(user=user, name="test").secret

    return _make


def record(match: Any, ranks: Sequence[int]) -> Any:
    from ladder.matches.recording import match_record_result

    return match_record_result(
        match_id=match.pk, result=make_result(ranks), replay_bytes=make_replay(match.pk)
    )


def standing(bot: Any, ladder: str = "dd-1") -> tuple[int, int, int]:
    """A bot's stored (rating, games, wins) on a ladder."""
    from ladder.ratings.models import BotRating

    return BotRating.objects.values_list("rating", "games", "wins").get(bot=bot, ladder=ladder)


def standings(ladder: str = "dd-1") -> list[tuple[int, int, int, int]]:
    """Every (bot id, rating, games, wins) on a ladder, by bot id."""
    from ladder.ratings.models import BotRating

    rows = BotRating.objects.filter(ladder=ladder).order_by("bot_id")
    return list(rows.values_list("bot_id", "rating", "games", "wins"))


@pytest.fixture
def stub_inproc(transactional_db: Any) -> Iterator[Any]:
    """A Ladder stub to a ``LadderServer`` in this process (the test's database), on loopback."""
    import grpc

    from digdown.v1 import ladder_pb2_grpc
    from ladder.grpc.server import LadderServer

    server = LadderServer("127.0.0.1:0", max_workers=2, rate="0")
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            yield ladder_pb2_grpc.LadderStub(channel)
    finally:
        server.stop(1.0)
