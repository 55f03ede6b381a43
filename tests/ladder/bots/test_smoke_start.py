"""A hosted bot's smoke match never charges the bot for a slow machine.

On a host at load 30-40 one version missed the 15 s start limit and was marked INVALID
for good. Now a start timeout is judged only on the last attempt (each attempt with a
longer limit), and only when the bot was not kept waiting for a CPU: these play real
smoke matches in the sandbox on the real engine, with a start limit below the bot's
own start-up time on the first attempt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from examples.hosted_bundle import build
from ladder.bots.models import BotVersion
from ladder.bots.services import bot_create, bot_version_upload
from tests.support.processes import Proc, start_engine
from tests.support.sandbox import require_sandbox
from workers.smoke import SmokeOutcome, StartTimedOut, play_smoke_match, timeout_is_the_bots

pytestmark = pytest.mark.django_db

START_S = 2.5  # the first attempt's limit; the bot sleeps longer before it serves
SLEEP_S = 3.0


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proc]:
    require_sandbox()
    p = start_engine(tmp_path_factory.mktemp("smoke-start-engine"))
    yield p
    p.stop()


def slow_starter(sleep_s: float) -> tuple[str, bytes]:
    """The starter house bot, which first sleeps ``sleep_s`` (a slow import, say)."""
    filename, script = build("starter")
    return filename, f"import time\ntime.sleep({sleep_s})\n".encode() + script


def test_a_start_timeout_is_played_again_with_a_longer_limit_and_passes(
    engine: Proc, make_user: Callable[..., Any], settings: Any
) -> None:
    """Before: the first timeout made the version INVALID for good."""
    settings.LADDER_SANDBOX_START_S = START_S
    settings.LADDER_SMOKE_START_ATTEMPTS = 3
    alice = make_user("alice")
    bot = bot_create(owner=alice, name="slow", kind="hosted")
    version = bot_version_upload(user=alice, bot_id=bot.pk, filename="bot.py",
                                 data=slow_starter(SLEEP_S)[1])  # fmt: skip
    with pytest.raises(StartTimedOut) as first:
        play_smoke_match(version_id=version.pk, engine_address=engine.address, attempt=0)
    assert first.value.outcome.start_timed_out
    assert "not serving within 2.5 s" in first.value.outcome.outcome
    version.refresh_from_db()
    assert version.status == BotVersion.Status.PENDING, "a start timeout judged on the spot"
    done = None
    for attempt in (1, 2):  # 5 s, then 7.5 s: enough for a 3 s sleep even on a busy host
        try:
            done = play_smoke_match(
                version_id=version.pk, engine_address=engine.address, attempt=attempt
            )
            break
        except StartTimedOut:
            continue
    assert done is not None and done.status == BotVersion.Status.VALID, done and done.smoke_outcome


def test_a_bot_that_never_serves_is_invalid_on_its_last_attempt(
    engine: Proc, make_user: Callable[..., Any], settings: Any
) -> None:
    """Its own failure: it sleeps (no CPU wanted, none waited for) past every limit."""
    settings.LADDER_SANDBOX_START_S = 1.5
    settings.LADDER_SMOKE_START_ATTEMPTS = 2
    alice = make_user("alice")
    bot = bot_create(owner=alice, name="sleeper", kind="hosted")
    version = bot_version_upload(user=alice, bot_id=bot.pk, filename="bot.py",
                                 data=slow_starter(600)[1])  # fmt: skip
    with pytest.raises(StartTimedOut):
        play_smoke_match(version_id=version.pk, engine_address=engine.address, attempt=0)
    done = play_smoke_match(version_id=version.pk, engine_address=engine.address, attempt=1)
    assert done.status == BotVersion.Status.INVALID
    assert done.smoke_outcome == "failed: not started: not serving within 3 s"


def test_a_starved_last_attempt_is_the_machines() -> None:
    starved = SmokeOutcome(False, "failed", b"", start_timed_out=True, waited_s=4.0)
    calm = SmokeOutcome(False, "failed", b"", start_timed_out=True, waited_s=0.1)
    assert not timeout_is_the_bots(starved, attempt=2, attempts=3, start_s=15.0)
    assert not timeout_is_the_bots(calm, attempt=1, attempts=3, start_s=15.0)
    assert timeout_is_the_bots(calm, attempt=2, attempts=3, start_s=15.0)
