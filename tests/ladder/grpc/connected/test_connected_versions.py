"""A connected bot names its version when it connects (``PlayHello.version_label``): a
new label is a new version (the next number) with its own rating entry and lineage row,
and the version its matches seat; a label used before makes that version current again.
Before, a connected bot had one version ("source, 0 bytes") whatever it ran."""

from __future__ import annotations

from typing import Any

import pytest

from tests.ladder.grpc.connected.conftest import wait_connected
from tests.ladder.grpc.connected.test_connected_play import create_connected, ladder_stub, play
from tests.support.workers import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]


def test_a_new_version_label_is_a_new_rated_version(
    server_a: Any, connect_worker: Any, connect_env: dict[str, str], user_token: Any,
    start_connected: Any, client: Any,
) -> None:  # fmt: skip
    from ladder.bots import presence
    from ladder.bots.models import Bot, BotVersion
    from ladder.matches.models import MatchSeat
    from ladder.ratings.models import VersionRating

    owner, tok = user_token("vera-versions")
    create_connected(ladder_stub(server_a.address), tok, "verbot", "foil")
    foil = start_connected("foil", tok, server_a.address)
    wait_connected(foil)
    bot = Bot.objects.get(name="verbot")

    def connect(label: str) -> Any:
        proc = start_connected(
            "verbot", tok, server_a.address, "--version-label", label, tag=f"-{label}"
        )
        wait_connected(proc)
        wait_until(lambda: presence.is_connected(bot.pk), 15, "verbot's presence")
        return proc

    ladders: set[str] = set()

    def seat_version(label: str) -> int:
        match_id, out = play(connect_env, "verbot", "foil")
        assert "FAILED" not in out, out
        seat = MatchSeat.objects.select_related("version", "match").get(match_id=match_id, bot=bot)
        assert seat.version.label == label and seat.rating_after is not None
        assert not seat.forfeit_reason
        ladders.add(seat.match.ladder)
        return seat.version.number

    first = connect("abc1234")
    v = BotVersion.objects.get(bot=bot, label="abc1234")
    assert v.number == 2 and v.status == "valid"  # v1: the version it was created with
    assert Bot.objects.get(pk=bot.pk).current_version_id == v.pk
    assert seat_version("abc1234") == 2
    first.stop()
    wait_until(lambda: not presence.is_connected(bot.pk), 15, "the first process gone")

    second = connect("def5678")
    assert BotVersion.objects.get(bot=bot, label="def5678").number == 3
    assert seat_version("def5678") == 3
    (ladder,) = ladders
    # Each version its own rating entry: the rows of the version lineage.
    entries = VersionRating.objects.filter(bot=bot, ladder=ladder)
    assert {2, 3} <= set(entries.values_list("version__number", flat=True))
    second.stop()
    wait_until(lambda: not presence.is_connected(bot.pk), 15, "the second process gone")

    connect("abc1234")  # an old label again: that version plays, no new one
    assert BotVersion.objects.filter(bot=bot).count() == 3
    assert Bot.objects.get(pk=bot.pk).current_version.label == "abc1234"

    client.force_login(owner)
    page = client.get(f"/bots/{bot.pk}/").content.decode()
    assert 'label <code class="version-label">def5678</code>' in page
    assert "source, 0" not in page
