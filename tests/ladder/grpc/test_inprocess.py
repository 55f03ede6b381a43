"""The Ladder servicer on a real ``grpc.server`` inside pytest: query counts and behaviour.

The production server shape (``LadderServer``: CallGuard, health, reflection)
binds port 0 in this process, so coverage sees the servicer and an outer
interceptor counts the database queries of every call on the RPC thread that
serves it. Reads must run the same number of queries whatever the data size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest

from digdown.v1 import ladder_pb2 as pb
from digdown.v1 import ladder_pb2_grpc
from ladder.grpc.server import LadderServer
from tests.ladder.conftest import record
from tests.ladder.grpc.conftest import bearer
from tests.support.queries import QueryCounter

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]
T = 10.0


@pytest.fixture
def served(transactional_db: Any) -> Iterator[tuple[Any, QueryCounter]]:
    counter = QueryCounter()
    server = LadderServer("127.0.0.1:0", max_workers=2, rate="0", outer_interceptors=[counter])
    server.start()
    try:
        with grpc.insecure_channel(server.address) as channel:
            yield ladder_pb2_grpc.LadderStub(channel), counter
    finally:
        server.stop(1.0)


class World:
    """Users, bots and recorded matches made through the services; grows on demand."""

    def __init__(self, make_user: Callable[..., Any], make_bot: Callable[..., Any]) -> None:
        from ladder.accounts.services import token_create

        self.owner = make_user("owner")
        self.token = token_create(user=self.owner).secret
        self.rival = make_user("rival")
        self.make_bot = make_bot
        self.bots: list[Any] = []
        self.grow(3)

    def grow(self, n: int) -> None:
        from ladder.matches.creation import match_create

        for _ in range(n):
            i = len(self.bots)
            self.bots.append(self.make_bot(self.owner if i % 2 else self.rival, f"gbot-{i}"))
        first = self.bots[0]
        for other in self.bots[-n:]:
            if other is not first:
                record(match_create(bot_ids=[first.pk, other.pk]), [1, 2])


@pytest.fixture
def world(served: Any, make_user: Any, make_bot: Any) -> World:
    world = World(make_user, make_bot)
    # The first call with a new token writes last_used_at; later ones (a minute) do not.
    served[0].ListMyBots(pb.ListMyBotsRequest(), metadata=bearer(world.token), timeout=T)
    return world


def test_reads_run_the_same_queries_whatever_the_size(served: Any, world: World) -> None:
    stub, counter = served
    md = bearer(world.token)

    def measure() -> dict[str, int]:
        first = world.bots[0].name
        calls = {
            "Leaderboard": lambda: stub.Leaderboard(pb.LeaderboardRequest(page_size=2), timeout=T),
            "ListMatches": lambda: stub.ListMatches(
                pb.ListMatchesRequest(bot=first, page_size=2), timeout=T
            ),
            "GetMatch": lambda: stub.GetMatch(
                pb.GetMatchRequest(match_id=world.bots[0].seats.latest("match_id").match_id),
                timeout=T,
            ),
            "ListMyBots": lambda: stub.ListMyBots(pb.ListMyBotsRequest(), metadata=md, timeout=T),
            "ListLadders": lambda: stub.ListLadders(pb.ListLaddersRequest(), timeout=T),
        }
        counts = {}
        for name, call in calls.items():
            call()
            counts[name] = counter.last[name]
        return counts

    small = measure()
    world.grow(12)
    large = measure()
    assert large == small
    bounds = {"Leaderboard": 1, "ListMatches": 3, "GetMatch": 2, "ListMyBots": 2, "ListLadders": 0}
    assert all(large[name] <= bound for name, bound in bounds.items()), (large, bounds)


def test_request_challenge_picks_near_opponents_in_bounded_queries(
    served: Any, world: World
) -> None:
    stub, counter = served
    md = bearer(world.token)
    mine = next(b for b in world.bots if b.owner_id == world.owner.pk)

    def challenge() -> Any:
        reply = stub.RequestChallenge(
            pb.RequestChallengeRequest(bot=mine.name, num_seats=3, rated=True),
            metadata=md,
            timeout=T,
        )
        return reply.match, counter.last["RequestChallenge"]

    match, small = challenge()
    assert (match.status, match.ladder, match.rated, len(match.seats)) == (
        "QUEUED",
        "dd-1",
        True,
        3,
    )
    assert match.seats[0].bot == mine.name and match.seed == 0
    world.grow(20)
    match, large = challenge()
    # (+2 since the challenge quotas: the lock on the user's row, one count of theirs;
    # +1 since the REST and gRPC share the challenge service: it reads the bot by id.)
    assert large == small <= 15, (small, large)
    # The nearest in rating: the bot that lost every game is the farthest from the top.
    board = stub.Leaderboard(pb.LeaderboardRequest(page_size=200), timeout=T).entries
    rating = {e.bot: e.rating for e in board}
    picked = [s.bot for s in match.seats[1:]]
    others = sorted(
        (abs(rating[name] - rating[mine.name]), name) for name in rating if name != mine.name
    )
    assert sorted(picked) == sorted(name for _, name in others[:2])


def test_ladders_and_page_tokens(served: Any, world: World) -> None:
    stub, _ = served
    ladders = stub.ListLadders(pb.ListLaddersRequest(), timeout=T).ladders
    assert [(lad.key, lad.ruleset, lad.difficulty, lad.is_default) for lad in ladders] == [
        ("dd-1", "dd-1", "normal", True)
    ]
    board = stub.Leaderboard(pb.LeaderboardRequest(page_size=2), timeout=T)
    assert board.ladder == "dd-1" and [e.position for e in board.entries] == [1, 2]
    rest = stub.Leaderboard(
        pb.LeaderboardRequest(page_size=2, page_token=board.next_page_token), timeout=T
    )
    assert [e.position for e in rest.entries] == [3] and not rest.next_page_token
    assert board.next_page_token.startswith("k")  # a keyset token (ladder.common.keyset)
    # An offset token from an older server still reads, and hands on a keyset one.
    old = stub.Leaderboard(pb.LeaderboardRequest(page_size=1, page_token="1"), timeout=T)
    assert [e.position for e in old.entries] == [2] and old.next_page_token.startswith("k")
    assert [e.bot for e in old.entries] == [board.entries[1].bot]  # found on the score index
    last = stub.Leaderboard(
        pb.LeaderboardRequest(page_size=1, page_token=old.next_page_token), timeout=T
    )
    assert [e.bot for e in last.entries] == [e.bot for e in rest.entries]
    with pytest.raises(grpc.RpcError) as err:
        stub.Leaderboard(pb.LeaderboardRequest(page_token="kZm9v"), timeout=T)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    for token in ["99999999999999999999", "²", "-1", "1e3", " 2", "x"]:
        for call in (
            lambda t: stub.Leaderboard(pb.LeaderboardRequest(page_token=t), timeout=T),
            lambda t: stub.ListMatches(
                pb.ListMatchesRequest(bot="gbot-0", page_token=t), timeout=T
            ),
        ):
            with pytest.raises(grpc.RpcError) as err:
                call(token)
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, token
            assert "page_token" in err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        stub.ListMatches(pb.ListMatchesRequest(bot="gbot\x000"), timeout=T)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "NUL" in err.value.details()
    with pytest.raises(grpc.RpcError) as err:
        stub.Leaderboard(pb.LeaderboardRequest(ladder="dd-9"), timeout=T)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND and "ladders: dd-1" in err.value.details()


def test_leaderboard_over_grpc_ranks_by_the_conservative_rating_with_sigma_intervals(
    served: Any, make_user: Any, make_bot: Any, settings: Any
) -> None:
    """A Plackett-Luce ladder: entries come by mu - 3 sigma, interval mu ± 1.96 sigma."""
    from ladder.matches.creation import match_create
    from ladder.ratings.models import BotRating

    settings.LADDER_LADDERS = {
        "dd-1": {
            "ruleset": "dd-1",
            "difficulty": "normal",
            "seats": (2, 4),
            "system": "plackett-luce",
        }
    }
    stub, _ = served
    owner = make_user("pl-owner")
    bots = [make_bot(owner, f"pl-{i}") for i in range(4)]
    for n in range(8):
        seated = [bots[(n + k) % 4] for k in range(2 + n % 3)]
        record(
            match_create(bot_ids=[b.pk for b in seated], requested_by=owner),
            list(range(1, len(seated) + 1)),
        )
    entries = stub.Leaderboard(pb.LeaderboardRequest(ladder="dd-1"), timeout=T).entries
    stored = {e.bot.name: e for e in BotRating.objects.filter(ladder="dd-1").select_related("bot")}
    assert [e.bot for e in entries] == sorted(
        stored, key=lambda name: (-stored[name].score, stored[name].bot_id)
    )
    for e in entries:
        s = stored[e.bot]
        assert e.rating == pytest.approx(s.rating / 100)
        assert e.interval_low == pytest.approx((s.rating - round(1.96 * s.sigma)) / 100)
        assert e.provisional == (s.sigma > 10987)
