"""The seed of a match, and everything it decides, is hidden until the match is finished.

The seed determines the whole dealt cave: whoever knows it before the end knows
every hidden card. So for every state a match can be in, every interface that
shows matches is asked — the REST API (detail, list and its filters, the
replay download, the viewer's timeline), the Ladder gRPC API (GetMatch,
ListMatches, DownloadReplay), the site's pages (match, replay viewer, bot,
now, the admin to a non-staff user) — anonymously and as the owner of a seated
bot, and no answer may contain the seed, a replay or a timeline until the match
is finished. A finished match whose deal another queued or running match still
plays (a duplicate deal) keeps them hidden too, until that one finishes.

The finished state is the positive control: there the seed, the replay and the
timeline must be shown, so a test that looked in the wrong place would fail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from django.test import Client
from rest_framework.test import APIClient

from digdown.v1 import ladder_pb2 as pb
from ladder.matches.claims import match_cancel, match_fail, match_start
from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.matches.recording import match_record_result
from tests.support.replays import gz, inprocess_replay

# gRPC calls are served on other threads: they must see committed rows.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]
T = 10.0
# Distinctive, 19 digits: it cannot turn up in a page by chance.
SEED = 7_391_827_364_519_283_746
STATES = ["queued", "running", "finished", "errored", "cancelled", "finished_twin_open"]


@dataclass
class World:
    owner: Any
    token: str
    bots: list[Any]
    match: Match
    revealed: bool


def _make_match(bots: list[Any], state: str) -> tuple[Match, bool]:
    """A match on ``SEED`` in ``state``, through the services (as the workers do)."""
    ids = [b.pk for b in bots]
    match = match_create(bot_ids=ids, seed=SEED)
    if state == "queued":
        return match, False
    if state == "cancelled":
        return match_cancel(match_id=match.pk, user=None, reason="cancelled by the test"), False
    started = match_start(match_id=match.pk, worker="test-worker")
    if state == "running":
        return started, False
    if state == "errored":
        failed = match_fail(match_id=match.pk, error="engine unavailable: test")
        return failed, False
    doc = inprocess_replay(seed=SEED, seats=len(ids))
    recorded = match_record_result(match_id=match.pk, result=doc["result"], replay_bytes=gz(doc))
    if state == "finished":
        return recorded.match, True
    # A duplicate deal: the same seed, still queued for other seats.
    match_create(bot_ids=list(reversed(ids)), seed=SEED)
    return recorded.match, False


@pytest.fixture(params=STATES)
def world(
    request: pytest.FixtureRequest,
    transactional_db: Any,
    make_user: Callable[..., Any],
    make_bot: Callable[..., Any],
    token_for: Callable[[Any], str],
) -> World:
    owner = make_user("seed-owner")
    rival = make_user("seed-rival")
    bots = [make_bot(owner, "seed-mine"), make_bot(rival, "seed-theirs")]
    match, revealed = _make_match(bots, request.param)
    return World(owner, token_for(owner), bots, match, revealed)


def _clients(w: World) -> dict[str, APIClient]:
    anonymous = APIClient()
    owner = APIClient()
    owner.credentials(HTTP_AUTHORIZATION=f"Bearer {w.token}")
    return {"anonymous": anonymous, "owner": owner}


def _rest_matches(client: APIClient, w: World) -> list[tuple[str, dict[str, Any]]]:
    """The match as every REST read shows it: detail, the list and each filter."""
    m = w.match
    shown = [("detail", client.get(f"/api/v1/matches/{m.pk}/").json())]
    for query in ["", f"?status={m.status}", f"?bot={w.bots[0].pk}", f"?ladder={m.ladder}"]:
        body = client.get(f"/api/v1/matches/{query}").json()
        found = [row for row in body["results"] if row["id"] == m.pk]
        assert found, f"match {m.pk} missing from /api/v1/matches/{query}"
        shown.append((f"list{query}", found[0]))
    return shown


def test_rest_hides_the_seed_and_replay_until_finished(world: World) -> None:
    m = world.match
    for who, client in _clients(world).items():
        for where, row in _rest_matches(client, world):
            assert row["status"] == m.status
            if world.revealed:
                assert row["seed"] == str(SEED), (who, where)
                assert row["replay"] and row["replay"]["sha256"] == m.replay_sha256
            else:
                assert row["seed"] is None, (who, where, m.status)
                assert row["replay"] is None, (who, where, m.status)
                assert str(SEED) not in str(row)
        replay = client.get(f"/api/v1/matches/{m.pk}/replay/")
        timeline = client.get(f"/api/v1/matches/{m.pk}/timeline/")
        if world.revealed:
            assert replay.status_code == 200
            assert timeline.status_code == 200, timeline.content[:300]
        else:
            # 404: no replay exists yet; 409: it exists but another match plays its deal.
            assert replay.status_code in (404, 409), (who, replay.status_code)
            assert timeline.status_code in (404, 409), (who, timeline.status_code)
            for answer in (replay, timeline):
                assert str(SEED) not in answer.content.decode(errors="replace")
        # The bots seated show no trace of it either.
        for bot in world.bots:
            body = client.get(f"/api/v1/bots/{bot.pk}/").content.decode()
            assert str(SEED) not in body


def test_grpc_hides_the_seed_and_replay_until_finished(world: World, stub_inproc: Any) -> None:
    m = world.match
    md = [("authorization", f"Bearer {world.token}")]
    for who, metadata in (("anonymous", None), ("owner", md)):
        got = stub_inproc.GetMatch(
            pb.GetMatchRequest(match_id=m.pk), metadata=metadata, timeout=T
        ).match
        listed = stub_inproc.ListMatches(
            pb.ListMatchesRequest(bot=world.bots[0].name), metadata=metadata, timeout=T
        ).matches
        rows = [got, *[x for x in listed if x.id == m.pk]]
        assert len(rows) == 2, who
        for row in rows:
            assert row.status == m.status.upper()
            if world.revealed:
                assert row.seed == SEED and row.replay_sha256 == m.replay_sha256
            else:
                assert row.seed == 0 and not row.replay_sha256 and row.replay_size == 0, who
                assert str(SEED) not in str(row)
        call = stub_inproc.DownloadReplay(pb.DownloadReplayRequest(match_id=m.pk), timeout=T)
        if world.revealed:
            assert b"".join(c.data for c in call)
        else:
            with pytest.raises(grpc.RpcError) as err:
                list(call)
            assert err.value.code() in (
                grpc.StatusCode.FAILED_PRECONDITION,
                grpc.StatusCode.NOT_FOUND,
            ), who
            assert str(SEED) not in (err.value.details() or "")


def test_pages_hide_the_seed_and_replay_until_finished(world: World) -> None:
    m = world.match
    signed_in = Client()
    signed_in.force_login(world.owner)
    pages = [
        f"/matches/{m.pk}/",
        f"/replays/matches/{m.pk}/",
        f"/bots/{world.bots[0].pk}/",
        "/now/",
        "/admin/matches/match/",
        f"/admin/matches/match/{m.pk}/change/",
    ]
    for who, client in (("anonymous", Client()), ("owner", signed_in)):
        for page in pages:
            answer = client.get(page)
            assert answer.status_code in (200, 302), (who, page, answer.status_code)
            html = answer.content.decode()
            if page.startswith("/admin/"):
                # Not staff: the admin sends them to its login, showing nothing.
                assert answer.status_code == 302 and not html.strip(), (who, page)
                continue
            shown = str(SEED) in html
            if page == f"/matches/{m.pk}/":
                assert shown == world.revealed, (who, page, m.status)
                has_replay = f"/api/v1/matches/{m.pk}/replay/" in html
                assert has_replay == world.revealed, (who, page, m.status)
            else:
                assert not shown, (who, page)
            if page.startswith("/replays/"):
                has_timeline = f"/api/v1/matches/{m.pk}/timeline/" in html
                assert has_timeline == world.revealed, (who, page, m.status)


def test_a_duplicate_deal_is_revealed_when_its_last_match_finishes(
    transactional_db: Any, make_user: Callable[..., Any], make_bot: Callable[..., Any]
) -> None:
    owner = make_user("twin-owner")
    bots = [make_bot(owner, "twin-a"), make_bot(owner, "twin-b")]
    first, _ = _make_match(bots, "finished_twin_open")
    twin = Match.objects.exclude(pk=first.pk).get(seed=SEED)
    api = APIClient()
    assert api.get(f"/api/v1/matches/{first.pk}/").json()["seed"] is None
    match_start(match_id=twin.pk, worker="test-worker")
    assert api.get(f"/api/v1/matches/{first.pk}/").json()["seed"] is None
    doc = inprocess_replay(seed=SEED, seats=2)
    match_record_result(match_id=twin.pk, result=doc["result"], replay_bytes=gz(doc))
    for match in (first, twin):
        body = api.get(f"/api/v1/matches/{match.pk}/").json()
        assert body["seed"] == str(SEED) and body["replay"] is not None
        assert api.get(f"/api/v1/matches/{match.pk}/replay/").status_code == 200
