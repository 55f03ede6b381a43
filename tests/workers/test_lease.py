"""The heartbeat of claims: one thread per process renews every claim it holds.

On the test database with committed rows (the heartbeat thread has a connection
of its own), PostgreSQL and SQLite.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from ladder.matches.claims import match_start
from ladder.matches.creation import match_create
from ladder.matches.models import Match
from tests.support.broker import use_broker
from tests.support.workers import wait_until
from workers.lease import HEARTBEATS, LeaseKeeper

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sqlite_too]


@pytest.fixture
def matches(settings: Any, tmp_path: Path) -> list[int]:
    from ladder.accounts.models import User
    from ladder.bots.services import bot_create

    use_broker(settings, {"LADDER_BROKER_DIR": str(tmp_path / "broker")}, tmp_path)
    settings.LADDER_DEV_MODE = True  # loopback endpoints (nothing is dialed here)
    owner = User.objects.create_user(username="owner", password="pw-12345678")
    bots = [
        bot_create(owner=owner, name=f"bot{i}", kind="remote", endpoint=f"127.0.0.1:{5000 + i}").pk
        for i in range(1, 3)
    ]
    return [match_create(bot_ids=bots).pk for _ in range(3)]


def lease_of(match_id: int) -> Any:
    return Match.objects.get(pk=match_id).lease_expires_at


def test_one_thread_renews_every_claim_and_stops_at_the_end(matches: list[int]) -> None:
    first, second, _ = matches
    for match_id in (first, second):
        match_start(match_id=match_id, worker="w1:1", lease_seconds=1)
    claimed = {m: lease_of(m) for m in (first, second)}
    # A lease of 1 s renewed every quarter of it; the other claim's lease is longer.
    with (
        LeaseKeeper(match_id=first, worker="w1:1", attempt=1, lease_s=1.0) as a,
        LeaseKeeper(match_id=second, worker="w1:1", attempt=1, lease_s=2.0) as b,
    ):
        wait_until(
            lambda: all(lease_of(m) > claimed[m] for m in (first, second)),
            10,
            "both leases renewed",
            poll_s=0.05,
        )
        assert (a.lost(), b.lost()) == ("", "")
        threads = {HEARTBEATS._thread}
    assert threads == {HEARTBEATS._thread} and HEARTBEATS._thread is not None
    # Out of the block: no renewal any more (none under way either: exit waits for it).
    ended = {m: lease_of(m) for m in (first, second)}
    with LeaseKeeper(match_id=matches[2], worker="w1:1", attempt=0, lease_s=0.2):
        # Another claim's renewals (this one fails: not started) come and go meanwhile.
        wait_until(lambda: HEARTBEATS._due == [], 10, "the unheld claim dropped", poll_s=0.05)
    assert {m: lease_of(m) for m in (first, second)} == ended


def test_a_lost_claim_is_reported_to_the_runner(matches: list[int]) -> None:
    match_id = matches[0]
    match_start(match_id=match_id, worker="w1:1", lease_seconds=60)
    with LeaseKeeper(match_id=match_id, worker="w1:1", attempt=1, lease_s=0.4) as lease:
        assert lease.lost() == ""
        # Its lease ran out and another worker took the match.
        Match.objects.filter(pk=match_id).update(lease_expires_at=timezone.now())
        match_start(match_id=match_id, worker="w2:2", lease_seconds=60)
        reason = wait_until(lease.lost, 10, "the lost claim noticed", poll_s=0.05)
    assert "no longer held" in reason
    assert Match.objects.get(pk=match_id).claimed_by == "w2:2"
