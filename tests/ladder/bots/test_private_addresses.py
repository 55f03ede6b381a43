"""Remote bots' endpoints stay out of everything public; their owners still learn them.

A bot's endpoint is "owner and staff only" in the API. These tests play matches
through the workers' play-match code (``play_queued_match``, in this process)
on a real engine with real remote bots on loopback — one that plays, one whose
port is closed (so its seat forfeits "unreachable") — and a match whose
endpoint the endpoint check refuses (the match is errored). Then they read
every public view: the replay (seats' and seat stats' ``address``, fault
reasons, handshakes), the match in the REST API, the match page, the gRPC
Match message. No address or port may appear. The seats' owner finds which
endpoint was dialed, and why one was refused, in the seat's owner-only log.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from ladder.bots.services import bot_create
from ladder.grpc.messages import match_pb
from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.matches.selectors import match_detail
from tests.support.processes import Proc, closed_port_address, start_bot, start_engine
from workers.queued_match import play_queued_match
from workers.runner import EnginePool
from workers.seats import REMOTE_SHOWN

pytestmark = [pytest.mark.django_db, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def procs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Proc, Proc]]:
    tmp = tmp_path_factory.mktemp("private-addresses")
    engine = start_engine(tmp)
    bot = start_bot("examples.random_bot", tmp, "random-bot")
    yield engine, bot
    bot.stop()
    engine.stop()


def _public_views(match: Match) -> dict[str, str]:
    """Everything anyone may read about ``match``, as text."""
    api, site = APIClient(), Client()
    views = {
        "api": api.get(f"/api/v1/matches/{match.pk}/").content.decode(),
        "list": api.get("/api/v1/matches/").content.decode(),
        "page": site.get(f"/matches/{match.pk}/").content.decode(),
        "grpc": str(match_pb(match_detail(match_id=match.pk))),
    }
    replay = api.get(f"/api/v1/matches/{match.pk}/replay/")
    if replay.status_code == 200:
        views["replay"] = gzip.decompress(replay.getvalue()).decode()
    return views


def _owner_log(owner: Any, match: Match, seat: int, token_for: Callable[[Any], str]) -> str:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(owner)}")
    answer = api.get(f"/api/v1/matches/{match.pk}/seats/{seat}/log/")
    assert answer.status_code == 200, answer.content
    stranger = APIClient()
    assert stranger.get(f"/api/v1/matches/{match.pk}/seats/{seat}/log/").status_code in (401, 403)
    return b"".join(answer.streaming_content if answer.streaming else [answer.content]).decode()


def test_a_played_match_shows_no_endpoint(
    procs: tuple[Proc, Proc],
    settings: Any,
    make_user: Callable[..., Any],
    token_for: Callable[[Any], str],
) -> None:
    engine, bot = procs
    settings.LADDER_DEV_MODE = True  # loopback endpoints are allowed here
    owner = make_user("endpoint-owner")
    gone = closed_port_address()
    alive = bot_create(owner=owner, name="alive", kind="remote", endpoint=bot.address)
    down = bot_create(owner=owner, name="down", kind="remote", endpoint=gone)
    match = match_create(bot_ids=[alive.pk, down.pk], seed=11)
    report = play_queued_match(match.pk, worker="test", engines=EnginePool(engine.address))
    match.refresh_from_db()
    assert report.recorded and match.status == Match.Status.FINISHED, report.line()
    down_seat = match.seats.get(bot=down)
    assert down_seat.ended == "forfeited" and "unreachable" in down_seat.forfeit_reason

    views = _public_views(match)
    assert "replay" in views
    doc = json.loads(views["replay"])
    assert [s["address"] for s in doc["seats"]] == [REMOTE_SHOWN, REMOTE_SHOWN]
    assert [s["address"] for s in doc["match"]["seat_stats"]] == [REMOTE_SHOWN, REMOTE_SHOWN]
    assert any("unreachable" in f["reason"] for f in doc["faults"])
    for where, text in views.items():
        for address in (bot.address, gone):
            port = address.rpartition(":")[2]
            assert address not in text and f":{port}" not in text, (where, address)
        # (The engine's address is the operator's internal one, not a user's.)
        assert "127.0.0.1" not in text.replace(engine.address, ""), where

    # The owner reads which endpoint each seat dialed, in the seat's own log.
    for seat in match.seats.all():
        note = _owner_log(owner, match, seat.seat, token_for)
        assert seat.version.endpoint in note


def test_a_refused_endpoint_is_not_named_in_the_public_error(
    procs: tuple[Proc, Proc],
    settings: Any,
    make_user: Callable[..., Any],
    token_for: Callable[[Any], str],
) -> None:
    engine, bot = procs
    settings.LADDER_DEV_MODE = True
    owner = make_user("refused-owner")
    alive = bot_create(owner=owner, name="alive2", kind="remote", endpoint=bot.address)
    other = bot_create(owner=owner, name="other2", kind="remote", endpoint=bot.address)
    match = match_create(bot_ids=[alive.pk, other.pk], seed=12)
    settings.LADDER_DEV_MODE = False  # now the endpoint check refuses loopback
    report = play_queued_match(match.pk, worker="test", engines=EnginePool(engine.address))
    match.refresh_from_db()
    assert match.status == Match.Status.ERRORED, report.line()
    assert "refused by the endpoint check" in match.error
    for where, text in _public_views(match).items():
        assert "127.0.0.1" not in text and bot.address not in text, where
        assert "loopback" not in text, where  # the check's reason names the address's kind
    note = _owner_log(owner, match, 0, token_for)
    assert bot.address in note and "refused" in note


def test_the_cli_keeps_showing_addresses(tmp_path: Path) -> None:
    """The one-match CLI is the author's own tool: there the address is the label."""
    from workers.runner import BotSpec

    spec = BotSpec(address="127.0.0.1:5000")
    assert spec.public("nothing listens at 127.0.0.1:5000") == "nothing listens at 127.0.0.1:5000"
    hidden = BotSpec(address="[::1]:5000", shown_address=REMOTE_SHOWN)
    assert "::1" not in hidden.public("ipv6:%5B::1%5D:5000 refused; [::1]:5000 gone")
