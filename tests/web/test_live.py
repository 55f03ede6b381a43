"""Live parts of the site: the pulse the pages poll, and a running match's public view.

The live view is fed the way a worker feeds it (``workers.live.LivePublisher``, the
runner's ``on_decision``) from a real game on the rules library, turned into the
engine's messages exactly as the engine sends them to the runner.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from digdown import wire
from digdown.v1 import engine_pb2
from engine.players import PLAYERS
from engine.rules import GameConfig, new_game
from ladder.matches.claims import match_start
from ladder.matches.creation import match_create
from ladder.viewer.models import LiveFrame
from tests.ladder.conftest import make_bot, make_user  # noqa: F401  (fixtures)
from workers.live import LivePublisher

pytestmark = pytest.mark.django_db


def feed(publisher: LivePublisher, seed: int, decisions: int) -> list[dict[str, Any]]:
    """Play a real 2-seat game, telling the publisher every decision; the observations."""
    state = new_game(GameConfig(seed=seed, num_seats=2, ruleset="dd-2"))
    bots = [PLAYERS["heuristic"](random.Random(s)) for s in range(2)]
    seen: list[dict[str, Any]] = []
    while not state.is_over and len(seen) < decisions:
        legal = state.legal_actions()
        if len(legal) == 1:
            state.apply_forced()
            continue
        seat = state.acting_seat
        obs = state.observation(seat)
        decision = engine_pb2.Decision(
            seat=seat,
            observation=wire.observation_to_proto(obs),
            legal_actions=wire.actions_to_proto(legal),
            ply=len(state.record["entries"]),
        )
        publisher(decision, wire.events_to_proto(state.log))
        seen.append(obs)
        state.apply(bots[seat].act(obs, legal))
    return seen


def running_match(make_user: Any, make_bot: Any) -> Any:  # noqa: F811  (the fixtures)
    """A 2-seat match of two owners' bots, started by a worker."""
    alice, bob = make_user("alice"), make_user("bob")
    match = match_create(bot_ids=[make_bot(alice, "alpha").pk, make_bot(bob, "beta").pk])
    match_start(match_id=match.pk, worker="test")
    return match


def test_the_live_view_is_public_behind_the_table_and_gone_at_the_end(
    make_user: Any,  # noqa: F811
    make_bot: Any,  # noqa: F811
) -> None:
    match = running_match(make_user, make_bot)
    client = Client()
    waiting = client.get(f"/api/v1/matches/{match.pk}/live/").json()
    assert waiting["live"] is True and "view" not in waiting  # running, nothing published yet
    publisher = LivePublisher(match.pk, delay=3, interval_s=0.0)
    seen = feed(publisher, seed=4, decisions=12)
    frame = LiveFrame.objects.get(match_id=match.pk)
    # Three decisions behind the table: the view of the 4th-last decision told.
    expected = dict(seen[-4])
    expected.pop("seat")
    assert frame.view == expected
    data = client.get(f"/api/v1/matches/{match.pk}/live/").json()
    assert data["live"] is True and data["view"] == expected and data["events"]
    assert all(isinstance(e["text"], str) and e["text"] for e in data["events"])
    assert "seed" not in data["view"] and "cave" not in data and "seed" not in data
    page = client.get(f"/replays/matches/{match.pk}/live/").content.decode()
    assert f'data-live-url="/api/v1/matches/{match.pk}/live/"' in page
    publisher.close()
    assert not LiveFrame.objects.filter(match_id=match.pk).exists()


def test_a_match_over_within_the_interval_publishes_nothing_and_an_attempt_clears_its_last(
    make_user: Any,  # noqa: F811
    make_bot: Any,  # noqa: F811
) -> None:
    match = running_match(make_user, make_bot)
    # The first frame waits an interval, as every next one: a quick match writes none.
    quick = LivePublisher(match.pk, delay=0, interval_s=3600.0, earlier_attempts=False)
    feed(quick, seed=4, decisions=12)
    assert not LiveFrame.objects.filter(match_id=match.pk).exists()
    quick.close()
    # An attempt that died left its frame: the next attempt's publisher clears it.
    feed(LivePublisher(match.pk, delay=0, interval_s=0.0), seed=4, decisions=3)
    assert LiveFrame.objects.filter(match_id=match.pk).exists()
    LivePublisher(match.pk, interval_s=3600.0, earlier_attempts=True).close()
    assert not LiveFrame.objects.filter(match_id=match.pk).exists()


def test_no_live_view_while_another_match_deals_the_same_cave(
    make_user: Any,  # noqa: F811
    make_bot: Any,  # noqa: F811
) -> None:
    alice, bob = make_user("alice"), make_user("bob")
    ids = [make_bot(alice, "alpha").pk, make_bot(bob, "beta").pk]
    match = match_create(bot_ids=ids, seed=77)
    twin = match_create(bot_ids=list(reversed(ids)), seed=77)
    match_start(match_id=match.pk, worker="test")
    feed(LivePublisher(match.pk, delay=0, interval_s=0.0), seed=77, decisions=3)
    data = Client().get(f"/api/v1/matches/{match.pk}/live/").json()
    assert data["live"] is False and "same cave" in data["why"] and "view" not in data
    assert twin.pk != match.pk


def test_the_pulse_changes_when_a_match_is_queued(
    make_user: Any,  # noqa: F811
    make_bot: Any,  # noqa: F811
) -> None:
    alice, bob = make_user("alice"), make_user("bob")
    a, b = make_bot(alice, "alpha"), make_bot(bob, "beta")
    client = Client()
    cache.clear()
    before = client.get("/live/pulse.json").json()
    assert before["poll_ms"] > 0
    match_create(bot_ids=[a.pk, b.pk])
    cache.clear()  # the pulse is cached for a moment; a new period reads again
    after = client.get("/live/pulse.json").json()
    assert after["pulse"] != before["pulse"]
    board = client.get("/").content.decode()
    assert 'id="board-live" data-live' in board and 'id="recent-matches" data-live' in board
