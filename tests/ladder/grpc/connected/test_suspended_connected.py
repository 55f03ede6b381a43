"""A suspended connected bot is told on its stream why it stops playing (a notice, then
FAILED_PRECONDITION with the reason), its owner's page says so without offering it to
the matchmaker or suggesting an upload, and the owner lifts it: the bot plays again.
Before, its stream stayed open and silent and the page said "offered to the matchmaker".
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.ladder.grpc.connected.conftest import wait_connected
from tests.ladder.grpc.connected.test_connected_play import create_connected, ladder_stub
from tests.support.workers import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]


def test_a_suspended_connected_bot_is_told_and_its_owner_lifts_it(
    server_a: Any, user_token: Any, start_connected: Any, client: Any
) -> None:
    from ladder.bots import presence
    from ladder.bots.models import Bot
    from ladder.bots.services import bot_auto_suspend, bot_unsuspend

    owner, tok = user_token("sue-owner")
    create_connected(ladder_stub(server_a.address), tok, "sleeper")
    bot = Bot.objects.get(name="sleeper")
    first = start_connected("sleeper", tok, server_a.address)
    wait_connected(first)
    wait_until(lambda: presence.is_connected(bot.pk), 15, "the stream's presence")

    assert bot_auto_suspend(bot_id=bot.pk, reason="forfeited 3 of its last 5 matches")
    # Told on the stream (a notice, then the close with the reason); the SDK stops (2).
    wait_until(lambda: first.proc.poll() is not None, 30, "the bot to be told and stop")
    log = first.log()
    assert first.proc.returncode == 2, log
    assert "the ladder says SUSPENDED: bot sleeper is suspended" in log, log
    assert "forfeited 3 of its last 5 matches" in log
    assert "FAILED_PRECONDITION" in log and "lifts it" in log, log
    wait_until(lambda: not presence.is_connected(bot.pk), 15, "the stream's record to go")

    client.force_login(owner)
    page = client.get(f"/me/bots/{bot.pk}/").content.decode()
    assert "suspended" in page
    assert "offered to the matchmaker" not in page.replace("not offered to the matchmaker", "")
    assert "new valid version" not in page and "Upload a version" not in page
    assert 'id="reactivate-connected"' in page

    # Reconnecting while suspended is refused with the same reason.
    again = start_connected("sleeper", tok, server_a.address, tag="-refused")
    wait_until(lambda: again.proc.poll() is not None, 30, "the refused hello")
    assert again.proc.returncode == 2 and "is suspended" in again.log(), again.log()

    bot_unsuspend(user=owner, bot_id=bot.pk)  # the owner lifts it once fixed
    back = start_connected("sleeper", tok, server_a.address, tag="-back")
    wait_connected(back)
    wait_until(lambda: presence.is_connected(bot.pk), 15, "the bot back on the matchmaker")
    page = client.get(f"/me/bots/{bot.pk}/").content.decode()
    assert "the bot is offered to the matchmaker" in page
