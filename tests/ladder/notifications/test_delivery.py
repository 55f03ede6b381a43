"""Telling authors, in this process: what is owed, sent once to a real SMTP server and a
real webhook receiver on loopback, choices, unsubscribe links, and the SSRF rules of
webhook URLs. The task and its retries in a real worker: ``test_worker.py``."""

from __future__ import annotations

import smtplib
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.db import transaction
from django.test import Client

from ladder.accounts.models import User
from ladder.notifications.kinds import Channel, Kind
from ladder.notifications.models import Delivery, Webhook
from ladder.notifications.selectors import choice_of
from ladder.notifications.services import (
    DeliveryFailed,
    choices_set,
    delivery_send,
    notify,
    webhook_secret_rotate,
    webhook_set,
)
from ladder.notifications.webhooks import WebhookRejected
from tests.support.notify_servers import SmtpSink, WebhookReceiver, verify


def author(make_user: Any, name: str = "author") -> User:
    user = make_user(name)
    user.email = f"{name}@example.org"
    user.save(update_fields=["email"])
    return user


def tell(
    user: User, key: str = "competition:1:result", kind: str = Kind.COMPETITION_RESULT
) -> list[Delivery]:
    return notify(
        user=user,
        kind=kind,
        key=key,
        subject="Final of the Spring Cup",
        body="You placed 2nd of 16.",
        link="https://ladder.test/competitions/1/",
        data={"competition": 1, "place": 2},
    )


def with_webhook(user: User, receiver: WebhookReceiver) -> None:
    made = webhook_set(user=user, url=receiver.url)
    assert made.secret and made.secret.startswith("whsec_")
    receiver.secret = made.secret


def test_an_event_is_mailed_and_posted_once_and_a_redelivered_task_sends_nothing(
    make_user: Any, smtp: SmtpSink, receiver: WebhookReceiver
) -> None:
    user = author(make_user)
    with_webhook(user, receiver)
    made = tell(user)
    assert sorted(d.channel for d in made) == [Channel.EMAIL, Channel.WEBHOOK]
    assert tell(user) == [], "the same event told again owes nothing more"
    assert Delivery.objects.filter(user=user).count() == 2
    for d in made:
        assert delivery_send(delivery_id=d.pk) == "sent"
    for d in made:  # the task delivered again (a retry, a redelivered message)
        assert delivery_send(delivery_id=d.pk) == "already sent"

    [mail] = smtp.wait_for(1)
    assert mail.recipients == ["author@example.org"]
    assert mail.message["Subject"] == "[Digging Down Ladder] Final of the Spring Cup"
    assert "You placed 2nd of 16." in mail.text
    assert "https://ladder.test/competitions/1/" in mail.text
    unsubscribe = mail.message["List-Unsubscribe"].strip().strip("<>")
    assert unsubscribe.startswith("https://ladder.test/unsubscribe/")
    assert unsubscribe in mail.text
    assert mail.message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    email_row = Delivery.objects.get(user=user, channel=Channel.EMAIL)
    assert mail.message["Message-ID"] == f"<dd-notify-{email_row.pk}@ladder.test>"

    [hit] = receiver.wait_for(1)
    assert hit.verified and hit.answered == 200
    assert hit.headers["webhook-id"] == f"dd-notify-{made[1].pk}"
    body = hit.json
    assert (body["type"], body["key"], body["data"]) == (
        "competition_result", "competition:1:result", {"competition": 1, "place": 2},
    )  # fmt: skip
    assert body["unsubscribe_url"].startswith("https://ladder.test/unsubscribe/")
    # A receiver refuses what was changed or signed with another key.
    with pytest.raises(ValueError, match="bad signature"):
        verify(receiver.secret, hit.headers, hit.body.replace(b"2nd", b"1st"))
    other = webhook_secret_rotate(user=user)
    with pytest.raises(ValueError, match="bad signature"):
        verify(other, hit.headers, hit.body)

    assert len(smtp.received()) == 1 and len(receiver.received()) == 1
    rows = Delivery.objects.filter(user=user)
    assert {(r.status, r.attempts) for r in rows} == {(Delivery.Status.SENT, 1)}
    assert {r.target for r in rows} == {"author@example.org", receiver.url}


def test_an_event_rolled_back_owes_nothing(make_user: Any) -> None:
    user = author(make_user)
    with pytest.raises(RuntimeError), transaction.atomic():
        assert tell(user)
        raise RuntimeError("the event itself failed")
    assert not Delivery.objects.exists()


def test_each_user_chooses_what_and_where(make_user: Any, receiver: WebhookReceiver) -> None:
    user = author(make_user)
    assert [d.channel for d in tell(user, "k1")] == [Channel.EMAIL], "no webhook set yet"
    # Good news is not mailed unless asked for.
    assert tell(user, "v1", Kind.SMOKE_PASSED) == []
    with_webhook(user, receiver)
    assert [d.channel for d in tell(user, "v2", Kind.SMOKE_PASSED)] == [Channel.WEBHOOK]
    choices_set(user=user, choices={Kind.COMPETITION_RESULT: {"email": False}})
    assert [d.channel for d in tell(user, "k2")] == [Channel.WEBHOOK]
    choices_set(user=user, choices={Kind.COMPETITION_RESULT: {"webhook": False}})
    assert tell(user, "k3") == []
    # No address, no e-mail.
    silent = make_user("silent")
    assert tell(silent, "k1") == []
    with pytest.raises(Exception, match="unknown notification kind"):
        notify(user=user, kind="nonsense", key="k", subject="s", body="b")


def test_a_choice_switched_off_after_the_event_stops_what_is_still_owed(
    make_user: Any, smtp: SmtpSink
) -> None:
    user = author(make_user)
    [owed] = tell(user)
    choices_set(user=user, choices={Kind.COMPETITION_RESULT: {"email": False}})
    assert delivery_send(delivery_id=owed.pk) == "skipped"
    assert smtp.received() == []


def test_the_unsubscribe_link_works_in_one_click_without_signing_in(
    make_user: Any, smtp: SmtpSink
) -> None:
    user = author(make_user)
    [first] = tell(user, "k1")
    assert delivery_send(delivery_id=first.pk) == "sent"
    [mail] = smtp.wait_for(1)
    path = urlsplit(mail.message["List-Unsubscribe"].strip().strip("<>")).path
    browser = Client()  # nobody signed in
    shown = browser.get(path)
    assert shown.status_code == 200 and b"unsubscribe-form" in shown.content
    assert choice_of(user_id=user.pk, kind=Kind.COMPETITION_RESULT).email, "a GET changes nothing"
    # What a mail client's own button sends (RFC 8058): no cookies, no CSRF token.
    done = Client(enforce_csrf_checks=True).post(path, {"List-Unsubscribe": "One-Click"})
    assert done.status_code == 200 and b"unsubscribed" in done.content
    assert not choice_of(user_id=user.pk, kind=Kind.COMPETITION_RESULT).email
    assert choice_of(user_id=user.pk, kind=Kind.COMPETITION_RESULT).webhook, "e-mail only"
    assert choice_of(user_id=user.pk, kind=Kind.BOT_SUSPENDED).email, "that kind only"
    assert tell(user, "k2") == []
    # Everything by e-mail, from the page's second button.
    assert browser.post(path, {"scope": "all"}).status_code == 200
    assert not any(choice_of(user_id=user.pk, kind=k).email for k in Kind.values)
    # A token not made here, or cut short, is a 404 and changes nothing.
    assert browser.post(path[:-6] + "/").status_code == 404
    assert browser.get("/unsubscribe/nonsense/").status_code == 404


def test_webhook_urls_follow_the_ssrf_rules(make_user: Any, settings: Any, api: Any) -> None:
    user = author(make_user)

    def resolves_to(*addresses: str) -> Any:
        return lambda host, port: list(addresses)

    for url, why in [
        ("http://hooks.example.org/x", "must use https"),
        ("https://10.1.2.3/x", "private"),
        ("https://127.0.0.1:8443/x", "loopback"),
        ("https://user:pw@hooks.example.org/x", "no user or password"),
        ("ftp://hooks.example.org/x", "https://"),
    ]:
        with pytest.raises(WebhookRejected, match=why):
            webhook_set(user=user, url=url, resolver=resolves_to("93.184.216.34"))
    with pytest.raises(WebhookRejected, match="link-local"):
        webhook_set(user=user, url="https://hooks.example.org/x", resolver=resolves_to(
            "93.184.216.34", "169.254.169.254"))  # fmt: skip
    made = webhook_set(user=user, url="https://Hooks.Example.org/x?a=1",
                       resolver=resolves_to("93.184.216.34"))  # fmt: skip
    assert made.webhook is not None and made.webhook.url == "https://hooks.example.org/x?a=1"
    # Over REST: a 400 that says why.
    api.force_authenticate(user)
    refused = api.patch(
        "/api/v1/notifications/settings/", {"webhook_url": "https://10.0.0.1/"}, format="json"
    )
    assert refused.status_code == 400 and "private" in refused.json()["detail"]


def test_a_webhook_that_resolves_inside_at_send_time_is_not_dialed(
    make_user: Any, settings: Any, receiver: WebhookReceiver
) -> None:
    user = author(make_user)
    choices_set(user=user, choices={Kind.COMPETITION_RESULT: {"email": False}})
    with_webhook(user, receiver)  # allowed in development mode
    [owed] = tell(user)
    settings.LADDER_DEV_MODE = False  # production: loopback is inside
    Webhook.objects.filter(user=user).update(url=receiver.url.replace("http:", "https:"))
    assert delivery_send(delivery_id=owed.pk) == "failed"
    owed.refresh_from_db()
    assert "refused now" in owed.last_error and "loopback" in owed.last_error
    assert receiver.received() == []


def test_a_failure_that_may_pass_is_given_back_for_a_retry_and_fails_after_the_last(
    make_user: Any, settings: Any, receiver: WebhookReceiver
) -> None:
    settings.LADDER_NOTIFY_MAX_ATTEMPTS = 2
    user = author(make_user)
    choices_set(user=user, choices={Kind.COMPETITION_RESULT: {"email": False}})
    with_webhook(user, receiver)
    receiver.statuses = [503, 503]
    [owed] = tell(user)
    with pytest.raises(DeliveryFailed, match="503"):
        delivery_send(delivery_id=owed.pk)
    owed.refresh_from_db()
    assert (owed.status, owed.attempts) == (Delivery.Status.PENDING, 1)
    assert delivery_send(delivery_id=owed.pk) == "failed"
    owed.refresh_from_db()
    assert (owed.status, owed.attempts) == (Delivery.Status.FAILED, 2)
    assert delivery_send(delivery_id=owed.pk) == "already failed"
    assert len(receiver.received()) == 2


def test_smtp_refusals(make_user: Any, smtp: SmtpSink) -> None:
    """A temporary SMTP refusal (4xx) is retried; a permanent one (5xx) fails at once: of the
    message or of its recipient."""
    user = author(make_user)
    [later] = tell(user, "k1")
    smtp.refuse_with = "451 4.3.0 try again later"
    with pytest.raises(DeliveryFailed, match="451"):
        delivery_send(delivery_id=later.pk)
    smtp.refuse_with = "554 5.7.1 no thanks"
    [never] = tell(user, "k2")
    assert delivery_send(delivery_id=never.pk) == "failed"
    smtp.refuse_with = ""
    smtp.refuse_rcpt_with = "450 4.2.1 mailbox busy"
    with pytest.raises(DeliveryFailed, match="for now"):
        delivery_send(delivery_id=later.pk)
    smtp.refuse_rcpt_with = "550 5.1.1 no such user"
    [unknown] = tell(user, "k3")
    assert delivery_send(delivery_id=unknown.pk) == "failed"
    smtp.refuse_rcpt_with = ""
    assert delivery_send(delivery_id=later.pk) == "sent"
    assert [m.message["Subject"] for m in smtp.wait_for(1)] == [
        "[Digging Down Ladder] Final of the Spring Cup"
    ]
    assert smtplib  # the backend's own errors are what is classified


def test_settings_over_rest_and_in_the_schema(
    make_user: Any, api: Any, receiver: WebhookReceiver
) -> None:
    user = author(make_user)
    assert api.get("/api/v1/notifications/settings/").status_code in (401, 403)
    api.force_authenticate(user)
    shown = api.get("/api/v1/notifications/settings/").json()
    assert shown["email"] == "author@example.org" and shown["webhook_url"] is None
    kinds = {c["kind"]: c for c in shown["choices"]}
    assert set(kinds) == set(Kind.values)
    assert (kinds["smoke_passed"]["email"], kinds["bot_suspended"]["email"]) == (False, True)
    changed = api.patch(
        "/api/v1/notifications/settings/",
        {"webhook_url": receiver.url, "choices": [{"kind": "bot_suspended", "email": False}]},
        format="json",
    ).json()
    assert changed["webhook_url"] == receiver.url and changed["webhook_secret"].startswith("whsec_")
    assert {c["kind"]: c["email"] for c in changed["choices"]}["bot_suspended"] is False
    again = api.patch(
        "/api/v1/notifications/settings/", {"webhook_url": receiver.url}, format="json"
    ).json()
    assert "webhook_secret" not in again, "the secret is shown once"
    rotated = api.post("/api/v1/notifications/webhook/secret/").json()["webhook_secret"]
    assert rotated != changed["webhook_secret"]
    assert (
        api.patch(
            "/api/v1/notifications/settings/", {"choices": [{"kind": "x"}]}, format="json"
        ).status_code
        == 400
    )
    assert api.patch(
        "/api/v1/notifications/settings/", {"choices": [{"kind": "bot_suspended", "email": "no"}]},
        format="json",
    ).status_code == 400  # fmt: skip
    tell(user)
    listed = api.get("/api/v1/notifications/deliveries/").json()["results"]
    assert [(d["kind"], d["channel"], d["status"]) for d in listed] == [
        ("competition_result", "webhook", "pending"),
        ("competition_result", "email", "pending"),
    ]
    assert (
        api.patch("/api/v1/notifications/settings/", {"webhook_url": ""}, format="json").json()[
            "webhook_url"
        ]
        is None
    )
    schema = api.get("/api/schema/?format=json").json()
    for path in ("settings/", "webhook/secret/", "deliveries/"):
        assert f"/api/v1/notifications/{path}" in schema["paths"]


def test_the_settings_page(make_user: Any, client: Any, receiver: WebhookReceiver) -> None:
    user = author(make_user)
    client.force_login(user)
    page = client.get("/me/notifications/")
    assert page.status_code == 200 and b'data-kind="bot_suspended"' in page.content
    form = {"webhook_url": receiver.url, "bot_suspended__email": "on",
            "bot_suspended__webhook": "on"}  # fmt: skip
    made = client.post("/me/notifications/", form)
    assert made.status_code == 200 and b"new-webhook-secret" in made.content  # shown once
    assert Webhook.objects.get(user=user).url == receiver.url
    assert not choice_of(user_id=user.pk, kind=Kind.SMOKE_FAILED).email  # its box was empty
    assert choice_of(user_id=user.pk, kind=Kind.BOT_SUSPENDED).webhook
    saved = client.post("/me/notifications/", form)
    assert saved.status_code == 302, "no new secret: back to the page"
    refused = client.post("/me/notifications/", {"webhook_url": "https://10.0.0.1/"})
    assert refused.status_code == 400 and b"private" in refused.content


def test_the_admin_lists_deliveries_and_never_shows_a_secret(
    make_user: Any, client: Any, receiver: WebhookReceiver
) -> None:
    user = author(make_user)
    with_webhook(user, receiver)
    [email, _] = tell(user)
    client.force_login(User.objects.create_superuser("root", "root@example.org", "pw-12345678"))
    hook = Webhook.objects.get(user=user)
    for path in (
        "/admin/notifications/delivery/?status__exact=pending",
        f"/admin/notifications/delivery/{email.pk}/change/",
        "/admin/notifications/webhook/",
        f"/admin/notifications/webhook/{hook.pk}/change/",
    ):
        page = client.get(path)
        assert page.status_code == 200, path
        assert receiver.secret.encode() not in page.content


def test_the_sweep_sends_again_what_is_still_owed_and_leaves_retries_alone(
    make_user: Any,
) -> None:
    from datetime import timedelta

    from django.test import TestCase
    from django.utils import timezone

    from ladder.notifications.services import deliveries_resend_pending

    user = author(make_user)
    lost, waiting, held, dead, fresh = (tell(user, f"k{i}")[0] for i in range(5))
    long_ago = timezone.now() - timedelta(hours=1)
    Delivery.objects.exclude(pk=fresh.pk).update(created_at=long_ago)
    # A retry is on its way (its countdown has not run out); a worker holds one; one
    # worker died holding its lease.
    Delivery.objects.filter(pk=waiting.pk).update(
        claimed_until=timezone.now() + timedelta(minutes=5)
    )
    Delivery.objects.filter(pk=held.pk).update(
        status=Delivery.Status.SENDING, claimed_until=timezone.now() + timedelta(minutes=1)
    )
    Delivery.objects.filter(pk=dead.pk).update(
        status=Delivery.Status.SENDING, claimed_until=timezone.now() - timedelta(minutes=1)
    )
    with TestCase.captureOnCommitCallbacks() as sent:
        assert deliveries_resend_pending(grace_s=600) == [lost.pk, dead.pk]
    assert len(sent) == 2, "one task message each, after commit"
    dead.refresh_from_db()
    assert dead.status == Delivery.Status.PENDING
    assert deliveries_resend_pending(grace_s=600) == [], "not again within the grace"
    with pytest.raises(Exception, match="absolute http"):
        notify(user=user, kind=Kind.BOT_SUSPENDED, key="x", subject="s", body="b",
               link="javascript:alert(1)")  # fmt: skip
