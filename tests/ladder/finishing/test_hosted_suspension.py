"""A hosted bot whose process exits in every ladder match is suspended, for real.

It passes its smoke match (two seats) and exits at its first decision of any
larger game. Three real matches in the sandbox on the real engine, played by
the workers' play-match code, make it forfeit three times ("dead"): the ladder
suspends it, the matchmaker stops seating it, and a new version that passes
its smoke match lifts it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from examples.hosted_bundle import build
from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_create, bot_version_upload
from ladder.matches.creation import match_create
from ladder.matches.models import MatchSeat
from ladder.matchmaking.services import matchmake
from tests.support.processes import Proc, start_engine
from tests.support.sandbox import require_sandbox
from workers.queued_match import play_queued_match
from workers.runner import EnginePool
from workers.smoke import play_smoke_match

pytestmark = pytest.mark.django_db

QUITTER = b"""import os

from digdown.bot import parse_args, serve


def act(observation, legal_actions):
    if observation["num_seats"] > 2:  # the smoke match has two seats: pass it, then quit
        os._exit(3)
    return legal_actions[0]


args = parse_args(None, "quitter")
serve(act, listen=args.listen, name="quitter", port_file=args.port_file)
"""


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proc]:
    require_sandbox()
    p = start_engine(tmp_path_factory.mktemp("suspend-engine"))
    yield p
    p.stop()


def _smoked(owner: Any, bot: Bot, filename: str, data: bytes, engine: Proc) -> BotVersion:
    version = bot_version_upload(user=owner, bot_id=bot.pk, filename=filename, data=data)
    checked = play_smoke_match(version_id=version.pk, engine_address=engine.address)
    assert checked.status == BotVersion.Status.VALID, checked.smoke_outcome
    return checked


def test_a_hosted_bot_that_exits_is_suspended_and_a_new_version_lifts_it(
    engine: Proc,
    make_user: Callable[..., Any],
    settings: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    settings.LADDER_MATCHMAKER_LADDERS = []
    settings.LADDER_SUSPEND_CONSECUTIVE = 3
    settings.LADDER_SUSPEND_WINDOW = 10
    a, b, c = make_user("a"), make_user("b"), make_user("c")
    quitter = bot_create(owner=a, name="quitter", kind="hosted")
    _smoked(a, quitter, "bot.py", QUITTER, engine)
    others = []
    for owner, name in ((b, "random"), (c, "starter")):
        bot = bot_create(owner=owner, name=f"house-{name}", kind="hosted")
        _smoked(owner, bot, *build(name), engine)
        others.append(bot)
    pool = EnginePool(engine.address)
    for n in range(3):
        assert Bot.objects.get(pk=quitter.pk).is_active, f"suspended after {n} forfeits"
        match = match_create(bot_ids=[others[0].pk, quitter.pk, others[1].pk], seed=n)
        # Auto-suspend follows the recording's commit (the test's transaction stands in).
        with django_capture_on_commit_callbacks(execute=True):
            report = play_queued_match(match.pk, worker="test", engines=pool)
        assert report.recorded, report.line()
        seat = MatchSeat.objects.get(match=match, bot=quitter)
        assert seat.ended == "forfeited" and "dead" in seat.forfeit_reason, seat.forfeit_reason
    quitter.refresh_from_db()
    assert not quitter.is_active and quitter.suspension == Bot.Suspension.AUTO
    assert quitter.suspended_reason.startswith("automatically suspended: forfeited its last 3")
    assert "dead" in quitter.suspended_reason
    [report] = matchmake(target=2, seed=1)
    assert report.created and all(quitter.pk not in t for t in report.tables)
    # A new version lifts it once its smoke match has passed.
    version = _smoked(a, quitter, *build("starter"), engine)
    quitter.refresh_from_db()
    assert quitter.is_active and quitter.current_version_id == version.pk
    assert quitter.suspension == "" and quitter.suspended_reason == ""
