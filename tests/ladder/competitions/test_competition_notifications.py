"""A competition tells its entrants' owners: each phase change and the final's result, by
the channels each chose (a real SMTP server and a webhook receiver that verifies every
signature, on loopback), exactly once however often the tick runs or a task is delivered
again, and not to an owner who unsubscribed from that kind."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from ladder.accounts.models import User
from ladder.competitions import services
from ladder.competitions.models import Competition
from ladder.notifications.kinds import Channel, Kind
from ladder.notifications.models import Delivery
from ladder.notifications.services import delivery_send, unsubscribe, webhook_set
from ladder.notifications.signing import unsubscribe_token
from tests.ladder.competitions.test_competitions import _create, _play_open
from tests.support.notify_servers import SmtpSink, WebhookReceiver, smtp_sink, webhook_receiver

pytestmark = pytest.mark.django_db

Phase = Competition.Phase


@pytest.fixture
def smtp(settings: Any) -> Iterator[SmtpSink]:
    with smtp_sink() as sink:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST = "127.0.0.1"
        settings.EMAIL_PORT = sink.port
        settings.EMAIL_TIMEOUT = 10
        settings.DEFAULT_FROM_EMAIL = "Ladder <ladder@ladder.test>"
        settings.LADDER_SITE_URL = "https://ladder.test"
        settings.LADDER_NOTIFY_TIMEOUT_S = 5
        yield sink


@pytest.fixture
def receiver(settings: Any) -> Iterator[WebhookReceiver]:
    settings.LADDER_DEV_MODE = True  # the receiver is on loopback, over http
    with webhook_receiver() as r:
        yield r


def _author(make_user: Any, name: str) -> User:
    user = make_user(name)
    user.email = f"{name}@example.org"
    user.save(update_fields=["email"])
    return user


def _send_all() -> list[str]:
    """What a worker does with every competition delivery (in id order): each outcome."""
    owed = Delivery.objects.filter(kind__startswith="competition_").order_by("pk")
    return [delivery_send(delivery_id=pk) for pk in owed.values_list("pk", flat=True)]


def test_phases_and_result_are_told_once_by_the_chosen_channels(
    make_user: Any, make_bot: Any, smtp: SmtpSink, receiver: WebhookReceiver
) -> None:
    staff = make_user("staff", staff=True)
    both = _author(make_user, "both")  # e-mail and a webhook
    mail_only = _author(make_user, "mailonly")
    quiet = _author(make_user, "quiet")  # unsubscribed from phase e-mails by the link
    hooked = webhook_set(user=both, url=receiver.url)
    receiver.secret = hooked.secret
    unsubscribe(
        token=unsubscribe_token(user_id=quiet.pk, kind=Kind.COMPETITION_PHASE, channel="email")
    )
    users = [both, mail_only, quiet, mail_only]
    bots = [make_bot(u, f"b-{i}") for i, u in enumerate(users[:3])]
    bots.append(make_bot(mail_only, "b-3"))  # two entries: one message names both
    c = _create(staff, name="Spring Cup", entries_per_user=2)
    for user, bot in zip(users, bots, strict=True):
        services.competition_enter(user=user, competition_id=c.pk, bot_id=bot.pk)

    now = timezone.now()
    for _ in range(2):  # a second tick (another scheduler, a task delivered again)
        services.competitions_tick(now + timedelta(seconds=61))
    for _ in range(2):
        services.competitions_tick(now + timedelta(seconds=121))
    c.refresh_from_db()
    assert c.phase == Phase.FINAL
    strength = {b.pk: i for i, b in enumerate(bots)}  # b-3 (mailonly's) is the strongest
    for _ in range(30):
        if not _play_open(c, strength):
            break
        services.final_advance(competition_id=c.pk)
        services.final_advance(competition_id=c.pk)
        c.refresh_from_db()
    assert c.phase == Phase.FINISHED
    services.competitions_tick(now + timedelta(seconds=200))
    assert services.final_advance(competition_id=c.pk) is False

    told = Delivery.objects.filter(kind__startswith="competition_")  # not the bots' smoke news
    owed = set(told.values_list("user__username", "kind", "key", "channel"))
    phase, result = Kind.COMPETITION_PHASE, Kind.COMPETITION_RESULT
    key = f"competition:{c.pk}"
    expected = set()
    for user, channels in (("both", ("email", "webhook")), ("mailonly", ("email",))):
        for channel in channels:
            expected |= {
                (user, phase, f"{key}:phase:frozen", channel),
                (user, phase, f"{key}:phase:final", channel),
                (user, result, f"{key}:result", channel),
            }
    expected.add(("quiet", result, f"{key}:result", "email"))  # the result is another kind
    assert owed == expected
    assert told.count() == len(expected), "each event owed once per channel"

    assert set(_send_all()) == {"sent"}
    assert set(_send_all()) == {"already sent"}, "a task delivered again sends nothing"

    mails = smtp.wait_for(len([o for o in expected if o[3] == "email"]))
    by_to: dict[str, list[Any]] = {}
    for mail in mails:
        [to] = mail.recipients
        by_to.setdefault(to, []).append(mail)
    assert {to: len(m) for to, m in by_to.items()} == {
        "both@example.org": 3,
        "mailonly@example.org": 3,
        "quiet@example.org": 1,
    }
    subjects = {m.message["Subject"] for m in by_to["mailonly@example.org"]}
    assert subjects == {
        "[Digging Down Ladder] Spring Cup: submissions are frozen",
        "[Digging Down Ladder] Spring Cup: the final has started",
        "[Digging Down Ladder] Spring Cup: b-3 placed 1st of 4",
    }
    [won] = [m for m in by_to["mailonly@example.org"] if "placed" in m.message["Subject"]]
    link = f"https://ladder.test/competitions/{c.pk}/"
    assert "The winner: b-3 by mailonly." in won.text
    assert "- b-3: 1st of 4" in won.text and "- b-1: " in won.text
    assert link in won.text
    [lost] = [m for m in by_to["both@example.org"] if "placed" in m.message["Subject"]]
    place = c.entries.get(bot=bots[0]).place
    assert lost.message["Subject"].endswith(
        f"b-0 placed {place}{'th' if place == 4 else 'rd'} of 4"
    )
    assert "The winner: b-3 by mailonly." in lost.text
    [final] = [m for m in by_to["both@example.org"] if "started" in m.message["Subject"]]
    assert link in final.text and "Your entry: b-0." in final.text
    [frozen] = [m for m in by_to["both@example.org"] if "frozen" in m.message["Subject"]]
    assert "The final starts at " in frozen.text and "not in the final" in frozen.text
    [quiet_mail] = by_to["quiet@example.org"]
    assert "placed" in quiet_mail.message["Subject"]

    hits = receiver.wait_for(3)
    assert all(h.verified and h.answered == 200 for h in hits)
    bodies = sorted((h.json["type"], h.json["key"]) for h in hits)
    assert bodies == sorted(
        [
            ("competition_phase", f"{key}:phase:final"),
            ("competition_phase", f"{key}:phase:frozen"),
            ("competition_result", f"{key}:result"),
        ]
    )
    [posted] = [h.json for h in hits if h.json["type"] == "competition_result"]
    assert posted["data"]["winner"] == "b-3 by mailonly"
    [b0] = posted["data"]["places"]
    assert (b0["bot"], b0["place"]) == ("b-0", place)
    assert len(receiver.received()) == 3


def test_a_competition_without_enough_finalists_tells_why(
    make_user: Any, make_bot: Any, settings: Any
) -> None:
    settings.LADDER_SITE_URL = "https://ladder.test"
    staff = make_user("staff", staff=True)
    lone = _author(make_user, "lone")
    c = _create(staff, name="Empty Cup")
    services.competition_enter(user=lone, competition_id=c.pk, bot_id=make_bot(lone, "solo").pk)
    services.competitions_tick(timezone.now() + timedelta(seconds=121))
    c.refresh_from_db()
    assert c.phase == Phase.FINISHED
    [told] = Delivery.objects.filter(user=lone, kind=Kind.COMPETITION_RESULT)
    assert told.channel == Channel.EMAIL
    assert told.subject == "Empty Cup: the final's result"
    assert "finished without a final result: fewer finalists than the final needs" in told.body
    assert "- solo: did not play the final" in told.body
    # It never had a final: no one is told that one started (after its result).
    assert not Delivery.objects.filter(user=lone, key__endswith=":phase:final").exists()


def test_a_private_tournament_without_a_final_never_says_it_started(
    make_user: Any, make_bot: Any, smtp: SmtpSink
) -> None:
    """Started with one playable bot, it ends at once: its owner hears the result only, not
    "the final has started" after it (the message that used to follow the result)."""
    owner = _author(make_user, "host")
    c = services.private_tournament_create(
        user=owner,
        name="Alone",
        bot_ids=[make_bot(owner, "only").pk],
        format="round_robin",
        ladder="dd-1",
        min_deals=1,
    )
    c = services.private_tournament_start(user=owner, competition_id=c.pk)
    assert c.phase == Phase.FINISHED
    told = Delivery.objects.filter(user=owner, kind__startswith="competition_")
    assert list(told.values_list("kind", "key")) == [
        (Kind.COMPETITION_RESULT, f"competition:{c.pk}:result")
    ]
    assert _send_all() == ["sent"]
    [mail] = smtp.wait_for(1)
    assert mail.message["Subject"] == "[Digging Down Ladder] Alone: the final's result"


def test_a_follower_is_told_entry_opens_and_every_phase_once(
    make_user: Any, make_bot: Any, smtp: SmtpSink, receiver: WebhookReceiver, token_for: Any
) -> None:
    """A user with no entry follows a competition (REST) before entry opens: "entry is
    open" reaches them (it reached no one before: owners enter after it opens), then the
    freeze, the final and the result, once each however often the tick runs, by their
    channels, each e-mail with its unsubscribe link. One who stopped following is not
    told; an owner who also follows is told once, as an owner."""
    from rest_framework.test import APIClient

    staff = make_user("staff", staff=True)
    fan = _author(make_user, "fan")  # follows, never enters
    hooked = webhook_set(user=fan, url=receiver.url)
    receiver.secret = hooked.secret
    gone = _author(make_user, "gone")  # follows, then stops
    entrant = _author(make_user, "entrant")  # follows and enters
    rival = _author(make_user, "rival")
    c = _create(staff, name="Autumn Cup", **_later())
    assert c.phase == Phase.ANNOUNCED
    api = APIClient()
    for user in (fan, gone, entrant):
        api.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(user)}")
        r = api.post(f"/api/v1/competitions/{c.pk}/follow/")
        assert (r.status_code, r.json()) == (201, {"following": True}), r.content
        assert api.post(f"/api/v1/competitions/{c.pk}/follow/").status_code == 200  # again
        assert api.get(f"/api/v1/competitions/{c.pk}/follow/").json() == {"following": True}
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(gone)}")
    assert api.delete(f"/api/v1/competitions/{c.pk}/follow/").status_code == 204
    assert api.get(f"/api/v1/competitions/{c.pk}/follow/").json() == {"following": False}

    now = timezone.now()
    for _ in range(2):
        services.competitions_tick(now + timedelta(seconds=11))  # entry opens
    bots = [make_bot(entrant, "e-0"), make_bot(rival, "r-0")]
    for user, bot in zip((entrant, rival), bots, strict=True):
        services.competition_enter(user=user, competition_id=c.pk, bot_id=bot.pk)
    for at in (71, 71, 131, 131):
        services.competitions_tick(now + timedelta(seconds=at))
    c.refresh_from_db()
    assert c.phase == Phase.FINAL
    for _ in range(30):
        if not _play_open(c, {b.pk: i for i, b in enumerate(bots)}):
            break
        services.final_advance(competition_id=c.pk)
        c.refresh_from_db()
    assert c.phase == Phase.FINISHED

    told = Delivery.objects.filter(kind__startswith="competition_")
    key = f"competition:{c.pk}"
    by_fan = sorted(told.filter(user=fan).values_list("key", "channel"))
    assert by_fan == sorted(
        (f"{key}:{event}", channel)
        for event in ("phase:entry", "phase:frozen", "phase:final", "result")
        for channel in ("email", "webhook")
    )
    assert not told.filter(user=gone).exists()
    entrant_keys = list(told.filter(user=entrant).values_list("key", flat=True))
    assert sorted(entrant_keys) == sorted(
        [f"{key}:phase:entry", f"{key}:phase:frozen", f"{key}:phase:final", f"{key}:result"]
    ), "told once each, as an owner (its entry named after it entered)"
    assert set(_send_all()) == {"sent"}
    mails = {m.message["Subject"]: m for m in smtp.wait_for(len(told.filter(channel="email")))
             if m.recipients == ["fan@example.org"]}  # fmt: skip
    opened = mails["[Digging Down Ladder] Autumn Cup: entry is open"]
    assert (
        "Enter a bot on its page." in opened.text and "You follow this competition" in opened.text
    )
    assert f"https://ladder.test/competitions/{c.pk}/" in opened.text
    assert "Stop these e-mails (one click, no sign-in): https://ladder.test/unsubscribe/" in (
        opened.text
    )
    assert opened.message["List-Unsubscribe"]
    result = mails["[Digging Down Ladder] Autumn Cup: the final's result"]
    assert "The winner: r-0 by rival." in result.text and "Your entry" not in result.text
    assert {h.json["key"] for h in receiver.wait_for(4)} == {
        f"{key}:phase:entry", f"{key}:phase:frozen", f"{key}:phase:final", f"{key}:result"
    }  # fmt: skip


def _later() -> dict[str, Any]:
    now = timezone.now()
    return {
        "entry_opens_at": now + timedelta(seconds=10),
        "freeze_at": now + timedelta(seconds=70),
        "final_starts_at": now + timedelta(seconds=130),
    }


def test_following_is_for_signed_in_users_and_public_competitions(
    make_user: Any, make_bot: Any, token_for: Any
) -> None:
    from rest_framework.test import APIClient

    staff = make_user("staff", staff=True)
    owner = _author(make_user, "host")
    c = _create(staff, name="Open Cup")
    mine = services.private_tournament_create(
        user=owner, name="Mine", bot_ids=[make_bot(owner, "solo").pk], format="round_robin"
    )
    api = APIClient()
    assert api.post(f"/api/v1/competitions/{c.pk}/follow/").status_code == 401
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(owner)}")
    assert api.post(f"/api/v1/competitions/{mine.pk}/follow/").status_code == 404
    assert api.post("/api/v1/competitions/999999/follow/").status_code == 404
    services.private_tournament_start(user=owner, competition_id=mine.pk)
    Competition.objects.filter(pk=c.pk).update(phase=Phase.FINISHED)
    r = api.post(f"/api/v1/competitions/{c.pk}/follow/")
    assert r.status_code == 409 and "finished" in r.json()["detail"]
