"""A whole competition in a real headless Chromium (Debian's, driven by Playwright).

Staff announce it in the admin; two users sign in and enter a bot each on the
competition's page; qualification plays on the ladder (a real match: engine
process, house bots over gRPC, what a worker runs); the freeze locks the versions
(a new endpoint registered after it plays on the ladder, never in the final); a
knockout final is played to its end, each of its matches by what a worker runs;
and the page shows the bracket and the winner with each place's interval.
Beat's part (moving the phases at their times) is ``competitions_tick`` called
with those times. Both users choose e-mail and a webhook on their notifications
page; what the notification worker does (``delivery_send``) is called for each
message owed, and a real SMTP server (aiosmtpd) and one webhook receiver per user
(verifying each signature) check that each user received the phase changes and
the result, once each.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests.browser.test_site import sign_in
from tests.support.notify_servers import smtp_sink, webhook_receiver
from tests.support.processes import start_engine
from tests.web.conftest import PlayedLadder, _play

pytestmark = [pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    proc = start_engine(tmp_path_factory.mktemp("competition-engine"))
    try:
        yield proc.address
    finally:
        proc.stop()


@pytest.fixture
def mail_and_hooks(settings: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    """A real SMTP server for the site's e-mail and a webhook receiver for each user."""
    with smtp_sink() as smtp, webhook_receiver() as alice, webhook_receiver() as bob:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST = "127.0.0.1"
        settings.EMAIL_PORT = smtp.port
        settings.EMAIL_TIMEOUT = 10
        settings.DEFAULT_FROM_EMAIL = "Ladder <ladder@ladder.test>"
        settings.LADDER_SITE_URL = "https://ladder.test"
        settings.LADDER_NOTIFY_TIMEOUT_S = 5
        yield smtp, {"alice": alice, "bob": bob}


def test_a_whole_competition(
    tab: Any,
    orm: Any,
    played_ladder: PlayedLadder,
    engine: str,
    mail_and_hooks: tuple[Any, dict[str, Any]],
) -> None:
    from django.contrib.auth.models import Permission

    from ladder.accounts.models import User
    from ladder.bots.models import Bot
    from ladder.bots.services import bot_set_endpoint
    from ladder.competitions.models import Competition, FinalDeal
    from ladder.competitions.services import competitions_tick, final_advance
    from ladder.matches.creation import OPEN_STATES
    from ladder.matches.models import Match, MatchSeat
    from ladder.notifications.models import Delivery
    from ladder.notifications.services import delivery_send
    from workers.queued_match import play_queued_match
    from workers.runner import EnginePool

    bots = played_ladder.bots
    with orm():
        staff = User.objects.get(username="mod")
        staff.user_permissions.set(Permission.objects.filter(codename__endswith="competition"))
    page = tab.page
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    # Staff announce it in the admin. Its pages link no icon, so Chromium asks for
    # /favicon.ico (a 404 its console reports, outside the page's own requests, which
    # ``missing`` holds to none).
    tab.expected_statuses.add(404)
    sign_in(tab, "mod")
    tab.goto("/admin/competitions/competition/add/")
    now = timezone.now()

    def when(field: str, at: Any) -> None:
        page.fill(f"#id_{field}_0", at.strftime("%Y-%m-%d"))
        page.fill(f"#id_{field}_1", at.strftime("%H:%M:%S"))

    page.fill("#id_name", "Winter Cup")
    page.fill("#id_rules", "Two seats on dd-1; a knockout of duplicate deals.")
    when("entry_opens_at", now - timedelta(minutes=1))
    when("freeze_at", now + timedelta(hours=1))
    when("final_starts_at", now + timedelta(hours=2))
    page.fill("#id_ladder", "dd-1")
    page.select_option("#id_format", "single_elimination")
    page.fill("#id_min_deals", "1")
    page.fill("#id_matchup_max_deals", "2")
    page.fill("#id_final_size", "4")
    page.click("input[name=_save]")
    page.wait_for_url("**/admin/competitions/competition/")
    with orm():
        cup = Competition.objects.get(name="Winter Cup")
        assert cup.phase == Competition.Phase.ENTRY
    page.context.clear_cookies()
    # Two users choose e-mail and a webhook for the competition's news, and sign up
    # their bots on its page (reached from the leaderboard).
    smtp, hooks = mail_and_hooks
    with orm():
        for user in ("alice", "bob"):
            User.objects.filter(username=user).update(email=f"{user}@example.org")
    for user, bot in (("alice", "digger"), ("bob", "mole")):
        sign_in(tab, user)
        tab.goto("/me/notifications/")
        page.get_by_label("Webhook URL").fill(hooks[user].url)  # loopback: dev mode
        for kind in ("A competition's phase changed", "A competition's final result"):
            for channel in ("e-mail", "webhook"):
                page.get_by_label(f"{kind} by {channel}").check()
        page.get_by_role("button", name="Save").click()
        hooks[user].secret = page.input_value("#webhook-secret")  # shown once
        tab.goto("/")
        page.click("#competitions-link a")
        page.click("text=Winter Cup")
        page.select_option("#id_bot", label=bot)
        page.click("#enter-form button[type=submit]")
        page.wait_for_selector(f"#entries >> text={bot}")
        page.context.clear_cookies()
    # Qualification: their ladder games.
    with orm():
        _play(engine, ("digger", "mole"), 77, bots)
        frozen = {b: Bot.objects.get(pk=bots[b]).current_version_id for b in ("digger", "mole")}
        competitions_tick(now + timedelta(hours=1, seconds=1))  # the freeze
        cup.refresh_from_db()
        assert cup.phase == Competition.Phase.FROZEN
        later = bot_set_endpoint(
            user=User.objects.get(username="alice"),
            bot_id=bots["digger"],
            endpoint=played_ladder.endpoint,
        )
        assert Bot.objects.get(pk=bots["digger"]).current_version_id == later.pk
        competitions_tick(now + timedelta(hours=2, seconds=1))  # the final starts
        for _ in range(20):
            deals = FinalDeal.objects.filter(competition=cup, deal__isnull=False)
            open_matches = Match.objects.filter(
                deal__in=deals.values("deal"), status__in=OPEN_STATES
            )
            ids = list(open_matches.values_list("pk", flat=True))
            if not ids:
                break
            for match_id in ids:
                report = play_queued_match(
                    match_id, worker="competition", engines=EnginePool(engine)
                )
                assert report.status == "finished", report.line()
            final_advance(competition_id=cup.pk)
        cup.refresh_from_db()
        assert cup.phase == Competition.Phase.FINISHED
        seats = MatchSeat.objects.filter(match__deal__competition_deal__competition=cup)
        assert seats.exists()
        for bot_id, version_id in seats.values_list("bot_id", "version_id"):
            name = "digger" if bot_id == bots["digger"] else "mole"
            assert version_id == frozen[name]  # the version after the freeze never played
        winner = cup.result["places"][0]
    tab.goto(f"/competitions/{cup.pk}/")
    assert page.inner_text("#competition-phase") == "finished"
    assert "wins" in page.inner_text("#bracket")
    rows = page.eval_on_selector_all(
        "#result tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))"
    )
    assert rows[0][0] == "1" and rows[0][2] == "1"  # the winner's place, its interval
    with orm():
        assert rows[0][1] == Bot.objects.get(pk=winner["bot"]).name
    assert "v1" in page.inner_text("#entries")
    tab.shot("competition-finished")
    assert not missing, missing
    # What the notification worker does with each message owed (twice: a task delivered
    # again sends nothing), then what each user received.
    with orm():
        owed = Delivery.objects.filter(kind__startswith="competition_", user__email__gt="")
        ids = list(owed.order_by("pk").values_list("pk", flat=True))
        assert len(ids) == 2 * 3 * 2, "two users, three events, two channels each"
        assert [delivery_send(delivery_id=pk) for pk in ids] == ["sent"] * len(ids)
        assert {delivery_send(delivery_id=pk) for pk in ids} == {"already sent"}
        winner_name = Bot.objects.get(pk=winner["bot"]).name
    key = f"competition:{cup.pk}"
    expected = {
        ("competition_phase", f"{key}:phase:frozen"),
        ("competition_phase", f"{key}:phase:final"),
        ("competition_result", f"{key}:result"),
    }
    mails = smtp.wait_for(6, timeout_s=30)
    for user, bot in (("alice", "digger"), ("bob", "mole")):
        mine = [m for m in mails if m.recipients == [f"{user}@example.org"]]
        subjects = sorted(m.message["Subject"] for m in mine)
        assert subjects == sorted(
            [
                "[Digging Down Ladder] Winter Cup: submissions are frozen",
                "[Digging Down Ladder] Winter Cup: the final has started",
                f"[Digging Down Ladder] Winter Cup: {bot} placed "
                + ("1st of 2" if bot == winner_name else "2nd of 2"),
            ]
        ), subjects
        [result] = [m for m in mine if "placed" in m.message["Subject"]]
        assert f"The winner: {winner_name} by " in result.text
        assert f"https://ladder.test/competitions/{cup.pk}/" in result.text
        hits = hooks[user].wait_for(3, timeout_s=30)
        assert all(h.verified and h.answered == 200 for h in hits)
        assert {(h.json["type"], h.json["key"]) for h in hits} == expected
        assert len(hooks[user].received()) == 3
    assert len(smtp.received()) == 6
