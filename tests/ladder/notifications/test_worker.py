"""The notification task in a real ``celery worker``: retried with backoff until a failing
webhook answers, and exactly once however often its message is delivered.

One worker for the module (two pool processes), on the test database and an embedded
broker of its own, mailing to a real SMTP server (aiosmtpd) and posting to a webhook
receiver that verifies every signature, both on loopback. Retries are quick (1 s, then
2 s) and unjittered, so their delays can be checked from below: a retry never comes
before its countdown, whatever the load.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from ladder.accounts.models import User
from ladder.common.tasks import task_send
from ladder.notifications.kinds import Channel, Kind
from ladder.notifications.models import Delivery
from ladder.notifications.services import choices_set, notify, webhook_set
from tests.support.broker import use_broker
from tests.support.database import database_url
from tests.support.notify_servers import SmtpSink, WebhookReceiver
from tests.support.processes import ROOT
from tests.support.workers import Worker, start_worker, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_S = 90.0


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[SmtpSink, WebhookReceiver]]:
    smtp, receiver = SmtpSink().start(), WebhookReceiver().start()
    yield smtp, receiver
    smtp.stop()
    receiver.stop()


@pytest.fixture(scope="module")
def worker_env(
    tmp_path_factory: pytest.TempPathFactory, servers: tuple[SmtpSink, WebhookReceiver]
) -> dict[str, str]:
    smtp, _ = servers
    tmp = tmp_path_factory.mktemp("notify-worker")
    return {
        "TMP": str(tmp),
        "LADDER_BROKER_DIR": str(tmp / "broker"),
        "CELERY_BROKER_URL": "",
        "REDIS_URL": "",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(smtp.port),
        "DEFAULT_FROM_EMAIL": "Ladder <ladder@ladder.test>",
        "LADDER_SITE_URL": "https://ladder.test",
        "LADDER_DEV_MODE": "1",  # the receiver is on loopback, over http
        "LADDER_NOTIFY_RETRY_BACKOFF_S": "1",
        "LADDER_NOTIFY_RETRY_JITTER": "0",
        "LADDER_NOTIFY_MAX_ATTEMPTS": "5",
        "LADDER_NOTIFY_TIMEOUT_S": "10",
        "LADDER_MATCHMAKER_TARGET": "0",
    }


@pytest.fixture(scope="module")
def worker(
    worker_env: dict[str, str], django_db_setup: Any, django_db_blocker: Any
) -> Iterator[Worker]:
    with django_db_blocker.unblock():
        db = database_url()
    env = {
        **os.environ,
        **worker_env,
        "PYTHONPATH": str(ROOT),
        "PYTHONUNBUFFERED": "1",
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "DATABASE_URL": db,
    }
    w = start_worker(env, Path(worker_env["TMP"]), "notify", concurrency=2)
    yield w
    w.stop()


@pytest.fixture(autouse=True)
def _same_broker_and_servers(
    settings: Any, worker_env: dict[str, str], servers: tuple[SmtpSink, WebhookReceiver]
) -> Iterator[None]:
    """This process sends to the worker's broker; each test starts with empty servers."""
    use_broker(settings, {}, Path(worker_env["TMP"]))
    settings.LADDER_DEV_MODE = True
    smtp, receiver = servers
    for box in (smtp.messages, receiver.hits):
        box.clear()
    receiver.statuses = []
    yield


def author(name: str, receiver: WebhookReceiver) -> User:
    user = User.objects.create_user(username=name, email=f"{name}@example.org", password="x")
    receiver.secret = webhook_set(user=user, url=receiver.url).secret or ""
    return user


def wait_sent(ids: list[int]) -> None:
    wait_until(
        lambda: (
            Delivery.objects.filter(pk__in=ids, status=Delivery.Status.SENT).count() == len(ids)
        ),
        WAIT_S,
        f"deliveries {ids} sent",
    )


def test_a_failing_webhook_is_retried_with_backoff_and_then_succeeds(
    worker: Worker, servers: tuple[SmtpSink, WebhookReceiver]
) -> None:
    _, receiver = servers
    user = author("retried", receiver)
    choices_set(user=user, choices={Kind.BOT_SUSPENDED: {"email": False}})
    receiver.statuses = [503, 503]  # down twice, then up
    [owed] = notify(user=user, kind=Kind.BOT_SUSPENDED, key="bot:1:suspended:t",
                    subject="Your bot x was suspended", body="why")  # fmt: skip
    wait_sent([owed.pk])
    first, second, third = receiver.wait_for(3)
    assert [h.answered for h in (first, second, third)] == [503, 503, 200]
    assert all(h.verified for h in (first, second, third))
    assert len({h.headers["webhook-id"] for h in (first, second, third)}) == 1, "one message"
    # Exponential backoff: 1 s, then 2 s (a countdown is never cut short, so from below).
    assert second.at - first.at >= 1.0
    assert third.at - second.at >= 2.0
    owed.refresh_from_db()
    assert (owed.status, owed.attempts) == (Delivery.Status.SENT, 3)
    assert "503" not in owed.last_error
    log = worker.log()
    assert re.search(r"Retry in 1s: DeliveryFailed\(\"webhook answered 503", log), log[-3000:]
    assert re.search(r"Retry in 2s: DeliveryFailed", log), log[-3000:]
    assert len(receiver.received()) == 3


def test_a_task_delivered_again_and_again_sends_nothing_twice(
    worker: Worker, servers: tuple[SmtpSink, WebhookReceiver]
) -> None:
    smtp, receiver = servers
    user = author("once", receiver)
    made = notify(user=user, kind=Kind.SMOKE_FAILED, key="version:9",
                  subject="mybot v3 failed its smoke match", body="failed: crashed")  # fmt: skip
    assert sorted(d.channel for d in made) == [Channel.EMAIL, Channel.WEBHOOK]
    ids = [d.pk for d in made]
    # The same messages twice more at once, while the first are on their way (two pool
    # processes take them side by side), and again after they were sent.
    for pk in ids * 2:
        task_send(django_settings.LADDER_TASK_NOTIFY, pk)
    wait_sent(ids)
    for pk in ids * 2:
        task_send(django_settings.LADDER_TASK_NOTIFY, pk)
    done = rf"delivery (?:{ids[0]}|{ids[1]})(?:: | \()"  # skipped, or sent
    wait_until(
        lambda: len(re.findall(done, worker.log())) >= 10, WAIT_S, "every copy of the task ran"
    )
    assert len(smtp.received()) == 1 and len(receiver.received()) == 1
    [mail] = smtp.received()
    assert mail.message["Subject"] == "[Digging Down Ladder] mybot v3 failed its smoke match"
    assert receiver.received()[0].verified
    assert {r.attempts for r in Delivery.objects.filter(pk__in=ids)} == {1}
    skipped = re.findall(rf"delivery (?:{ids[0]}|{ids[1]}): (already sent|busy)", worker.log())
    assert len(skipped) >= 8, worker.log()[-3000:]
