"""Every REST read runs a bounded number of queries, the same whatever the data size.

Each endpoint is measured on a small ladder, then again after the data has
grown (more bots, more matches, more seats and versions per bot); the query
count must not change and must stay under its bound. An N+1 shows up as a
count that grows with the data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from ladder.bots.services import bot_version_upload
from ladder.matches.creation import match_create
from ladder.tournaments.models import Tournament
from tests.ladder.conftest import record

pytestmark = pytest.mark.django_db

# Anonymous reads; an authenticated one adds the token lookup.
BOUNDS = {
    "/api/v1/ladders/": 0,
    "/api/v1/leaderboard/": 2,
    "/api/v1/leaderboard/?ladder=dd-1&provisional=true&page=2&page_size=2": 2,
    "/api/v1/bots/": 2,
    "/api/v1/bots/?search=bot&kind=hosted": 2,
    "/api/v1/bots/{bot}/": 2,
    "/api/v1/bots/{bot}/versions/": 3,
    "/api/v1/bots/{bot}/rating-history/": 2,
    "/api/v1/matches/": 2,
    "/api/v1/matches/?status=finished&page_size=3": 2,
    "/api/v1/matches/?bot={bot}": 2,
    "/api/v1/matches/?tournament={cup}": 2,
    "/api/v1/matches/?ladder=dd-1&status=queued": 2,
    "/api/v1/matches/{match}/": 2,
    "/api/v1/tournaments/": 2,
    "/api/v1/tournaments/{cup}/": 1,
    "/api/v1/tournaments/{cup}/participants/": 3,
}
TOKEN_QUERIES = 1  # the token lookup (last_used_at is written at most once a minute)
AUTHED_BOUNDS = {"/api/v1/tokens/": 2, "/api/v1/bots/?mine=true": 2}


class Ladder:
    """A ladder that can grow: bots with versions, recorded matches, a tournament."""

    def __init__(self, make_user: Callable[..., Any], make_bot: Callable[..., Any]) -> None:
        self.owner = make_user("owner")
        self.make_bot = make_bot
        self.bots: list[Any] = []
        self.cup = Tournament.objects.create(name="Cup")
        self.grow(bots=4, matches=3)

    def grow(self, *, bots: int, matches: int) -> None:
        for _ in range(bots):
            bot = self.make_bot(self.owner, f"bot-{len(self.bots)}")
            bot_version_upload(user=self.owner, bot_id=bot.pk, filename="b.py", data=b"x = 1\n")
            self.bots.append(bot)
            self.cup.participants.add(bot)
        busiest = self.bots[0]
        for i in range(matches):
            seated = [busiest, *self.bots[1 + i % (len(self.bots) - 1) :][:2]]
            ids = [b.pk for b in seated]
            match = match_create(bot_ids=ids, tournament=self.cup)
            record(match, list(range(1, len(ids) + 1)))
        match_create(bot_ids=[b.pk for b in self.bots[:2]])  # one stays queued

    def url(self, path: str) -> str:
        last = self.bots[0].seats.order_by("-match_id").first().match_id
        return path.format(bot=self.bots[0].pk, cup=self.cup.pk, match=last)


def count(client: APIClient, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        r = client.get(url)
    assert r.status_code == 200, (url, r.status_code, r.content[:300])
    return len(ctx.captured_queries)


def test_rest_reads_run_the_same_queries_whatever_the_size(
    make_user: Any, make_bot: Any, token_for: Any
) -> None:
    world = Ladder(make_user, make_bot)
    anonymous, authed = APIClient(), APIClient()
    authed.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(world.owner)}")
    authed.get("/api/v1/tokens/")  # sets last_used_at, which the next minute's calls skip
    clients = [(anonymous, 0, BOUNDS), (authed, TOKEN_QUERIES, AUTHED_BOUNDS)]
    bounds = {path: b + extra for _, extra, paths in clients for path, b in paths.items()}

    def measure() -> dict[str, int]:
        return {
            path: count(client, world.url(path)) for client, _, paths in clients for path in paths
        }

    small = measure()
    world.grow(bots=8, matches=12)
    large = measure()
    assert large == small, {p: (small[p], large[p]) for p in small if small[p] != large[p]}
    over = {p: (n, bounds[p]) for p, n in large.items() if n > bounds[p]}
    assert not over, over
