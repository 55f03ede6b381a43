"""The ladder's services a worker calls: claim, lease, release, fail, the janitor, enqueueing.

In-process on the test database; messages go to a real embedded broker in the
test's temp directory, so "enqueued" means a message file naming the task and
the match id, sent only when the transaction commits (a worker never gets an id it cannot read).
"""

from __future__ import annotations

import base64
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.utils import timezone

from ladder.common.exceptions import Conflict
from ladder.matches.claims import (
    match_fail,
    match_heartbeat,
    match_release,
    match_start,
)
from ladder.matches.creation import match_create
from ladder.matches.models import Match
from ladder.matches.retries import match_requeue_stale
from tests.support.broker import use_broker

# Claims, leases and the janitor lock rows on PostgreSQL and the whole file on SQLite
# (`make run`'s workers): both databases.
pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_too]


@pytest.fixture
def queue(settings: Any, tmp_path: Path) -> Path:
    """The embedded broker's queue folder for this test."""
    use_broker(settings, {"LADDER_BROKER_DIR": str(tmp_path / "broker")}, tmp_path)
    return Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])


def sent(queue: Path) -> list[int]:
    """Match ids of the play-match messages waiting in the queue folder, oldest first."""
    ids = []
    for path in sorted(queue.glob("*.msg")):
        message = json.loads(path.read_text())
        assert message["headers"]["task"] == settings.LADDER_TASK_PLAY_MATCH
        assert path.name.endswith(f".{settings.LADDER_MATCH_QUEUE}.msg")
        args, kwargs, _ = json.loads(base64.b64decode(message["body"]))
        assert kwargs == {}
        ids.extend(args)
    return ids


@pytest.fixture
def bots(db: Any, settings: Any) -> list[int]:
    from ladder.accounts.models import User
    from ladder.bots.services import bot_create

    settings.LADDER_DEV_MODE = True  # loopback endpoints (nothing is dialed here)
    owner = User.objects.create_user(username="owner", password="pw-12345678")
    return [
        bot_create(owner=owner, name=f"bot{i}", kind="remote", endpoint=f"127.0.0.1:{5000 + i}").pk
        for i in range(1, 4)
    ]


def new_match(bots: list[int], capture: Any) -> Match:
    with capture(execute=True):
        return match_create(bot_ids=bots[:2])


def test_create_enqueues_only_on_commit(
    bots: list[int], queue: Path, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        match = match_create(bot_ids=bots)
    assert len(callbacks) == 1 and sent(queue) == []  # nothing before the commit
    callbacks[0]()
    assert sent(queue) == [match.pk]
    assert match.enqueued_at is not None and match.status == Match.Status.QUEUED


def test_claim_is_conditional(
    bots: list[int], queue: Path, django_capture_on_commit_callbacks: Any
) -> None:
    match = new_match(bots, django_capture_on_commit_callbacks)
    claimed = match_start(match_id=match.pk, worker="w1:1", lease_seconds=60)
    assert (claimed.status, claimed.attempts, claimed.claimed_by) == ("running", 1, "w1:1")
    with pytest.raises(Conflict, match="match is running"):
        match_start(match_id=match.pk, worker="w2:2", lease_seconds=60)


def test_heartbeat_renews_only_the_holders_lease(
    bots: list[int], queue: Path, django_capture_on_commit_callbacks: Any
) -> None:
    match = new_match(bots, django_capture_on_commit_callbacks)
    claimed = match_start(match_id=match.pk, worker="w1:1", lease_seconds=5)
    before = claimed.lease_expires_at
    assert match_heartbeat(match_id=match.pk, worker="w1:1", attempt=1, lease_seconds=600)
    after = Match.objects.get(pk=match.pk).lease_expires_at
    assert after is not None and before is not None and after > before + timedelta(seconds=500)
    assert not match_heartbeat(match_id=match.pk, worker="w2:2", attempt=1, lease_seconds=600)
    assert not match_heartbeat(match_id=match.pk, worker="w1:1", attempt=2, lease_seconds=600)


def test_expired_lease_is_reclaimed_and_the_old_claim_is_fenced(
    bots: list[int], queue: Path, django_capture_on_commit_callbacks: Any
) -> None:
    match = new_match(bots, django_capture_on_commit_callbacks)
    match_start(match_id=match.pk, worker="w1:1", lease_seconds=60)
    Match.objects.filter(pk=match.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
    again = match_start(match_id=match.pk, worker="w2:2", lease_seconds=60)
    assert (again.attempts, again.claimed_by) == (2, "w2:2")
    # The first worker woke up: none of its writes touch the match any more.
    assert not match_heartbeat(match_id=match.pk, worker="w1:1", attempt=1, lease_seconds=60)
    assert not match_release(match_id=match.pk, worker="w1:1", attempt=1, error="late")
    with pytest.raises(Conflict, match="no longer held"):
        match_fail(match_id=match.pk, error="late", worker="w1:1", attempt=1)
    assert Match.objects.get(pk=match.pk).status == Match.Status.RUNNING


def test_release_puts_it_back_and_attempts_are_capped(
    bots: list[int], queue: Path, django_capture_on_commit_callbacks: Any
) -> None:
    match = new_match(bots, django_capture_on_commit_callbacks)
    for attempt in (1, 2):
        match_start(match_id=match.pk, worker="w:1", lease_seconds=60, max_attempts=2)
        assert match_release(match_id=match.pk, worker="w:1", attempt=attempt, error="engine gone")
        released = Match.objects.get(pk=match.pk)
        assert (released.status, released.claimed_by, released.lease_expires_at) == (
            "queued", "", None,
        )  # fmt: skip
        assert released.error == f"attempt {attempt}: engine gone"
    with pytest.raises(Conflict, match="errored after 2 attempts"):
        match_start(match_id=match.pk, worker="w:1", lease_seconds=60, max_attempts=2)
    gave_up = Match.objects.get(pk=match.pk)
    assert gave_up.status == Match.Status.ERRORED
    assert gave_up.error == "gave up after 2 attempts; last: attempt 2: engine gone"


def test_janitor_requeues_lost_workers_and_resends_lost_messages(
    bots: list[int], queue: Path, django_capture_on_commit_callbacks: Any
) -> None:
    now = timezone.now()
    lost_worker = new_match(bots, django_capture_on_commit_callbacks)
    last_try = new_match(bots, django_capture_on_commit_callbacks)
    lost_message = new_match(bots, django_capture_on_commit_callbacks)
    fresh = new_match(bots, django_capture_on_commit_callbacks)
    alive = new_match(bots, django_capture_on_commit_callbacks)
    for match in (lost_worker, last_try, alive):
        match_start(match_id=match.pk, worker="w:1", lease_seconds=60)
    Match.objects.filter(pk=last_try.pk).update(attempts=3)
    Match.objects.filter(pk__in=[lost_worker.pk, last_try.pk]).update(
        lease_expires_at=now - timedelta(seconds=1)
    )
    Match.objects.filter(pk=lost_message.pk).update(enqueued_at=now - timedelta(seconds=700))
    for path in queue.glob("*.msg"):
        path.unlink()  # the broker restarted empty
    with django_capture_on_commit_callbacks(execute=True):
        report = match_requeue_stale(queued_grace_s=600, max_attempts=3, now=now)
    assert report.requeued == [lost_worker.pk]
    assert report.errored == [last_try.pk]
    assert report.resent == [lost_message.pk]
    assert sorted(sent(queue)) == sorted([lost_worker.pk, lost_message.pk])
    states = dict(Match.objects.values_list("pk", "status"))
    assert states == {
        lost_worker.pk: "queued",
        last_try.pk: "errored",
        lost_message.pk: "queued",
        fresh.pk: "queued",
        alive.pk: "running",
    }
    assert "lease expired" in Match.objects.get(pk=lost_worker.pk).error
    # Resent now: the next pass within the grace leaves it alone.
    with django_capture_on_commit_callbacks(execute=True):
        again = match_requeue_stale(queued_grace_s=600, max_attempts=3, now=now)
    assert not again


def test_a_worker_whose_own_infrastructure_failed_stays_away_for_a_while(
    bots: list[int], queue: Path, django_capture_on_commit_callbacks: Any, settings: Any
) -> None:
    """A worker cut off (from the bots, from every engine) released a
    match; for LADDER_WORKER_OWN_FAULT_COOLDOWN_S it claims nothing, so the released
    matches land on a worker that can play them instead of spending their attempts here."""
    from workers import queued_match

    match = new_match(bots, django_capture_on_commit_callbacks)
    settings.LADDER_WORKER_OWN_FAULT_COOLDOWN_S = 30
    queued_match._note_own_fault()
    try:
        report = queued_match.play_queued_match(match.pk, worker="w1:1")
        assert report.status == "deferred" and "failed a match itself" in report.error
        match.refresh_from_db()
        assert (match.status, match.attempts) == (Match.Status.QUEUED, 0)  # untouched
        assert 0 < queued_match.own_fault_cooldown_s() <= 30
    finally:
        queued_match._own_fault_until = 0.0
    assert queued_match.own_fault_cooldown_s() == 0
