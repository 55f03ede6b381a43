"""A ladder filled by really played matches, a live server on it, and a real browser.

``played_ladder`` (once per module) starts a real engine and real house bots
(gRPC servers on loopback), registers remote bots through the services and
plays matches through ``workers.queued_match.play_queued_match`` (what a
worker runs for every queued match): the runner dials the bots, the engine applies every move,
the result, replay and ratings are recorded exactly once. The data is
committed (the live server's threads read it) and flushed when the module ends.

The browser is Debian's Chromium driven by Playwright, never a downloaded one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connections
from django.test import override_settings

from tests.ladder.conftest import HIGH_RATES, make_bot, make_user  # noqa: F401  (fixtures)
from tests.support.processes import (
    CHROMIUM_FLAGS,
    ROOT,
    chromium_path,
    closed_port_address,
    start_bot,
    start_engine,
)

# Playwright's sync API runs an event loop in this thread; Django's ORM calls from
# test code (checks on stored rows) are still plain synchronous calls.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

PASSWORD = "pw-web-12345678"
SCREENSHOTS = Path(os.environ.get("LADDER_SCREENSHOTS_DIR", ROOT / "var" / "screenshots"))


@dataclass
class PlayedLadder:
    """What ``played_ladder`` made: names to ids, and the processes' addresses.

    ``finished`` lists every played match in order (the dd-1 schedule, then dd-2's,
    then the hosted bot's); ``hosted_match`` is the match bob's hosted bot played in
    the sandbox (None where bubblewrap cannot run: its tests skip, or fail in CI).
    """

    users: dict[str, Any]
    bots: dict[str, int]
    finished: list[int]
    on_dd2: list[int]
    hosted_match: int | None
    queued: int
    tournament: int
    endpoint: str
    extra: dict[str, Any] = field(default_factory=dict)


# (seats by bot name, seed, in the tournament?)
SCHEDULE: list[tuple[tuple[str, ...], int, bool]] = [
    (("digger", "dice"), 11, False),
    (("mole", "pebble"), 12, False),
    (("digger", "mole", "pebble"), 13, True),
    (("dice", "pebble", "digger", "mole"), 14, True),
    (("digger", "pebble"), 15, False),
    (("mole", "dice", "digger"), 16, True),
    (("pebble", "digger"), 17, False),
    (("digger", "dice", "mole", "pebble"), 18, False),
    (("dice", "mole"), 19, False),
    (("ghost", "digger", "pebble"), 20, False),  # ghost's endpoint is dead: it forfeits
    (("mole", "digger"), 21, False),
    (("digger", "mole", "dice"), 22, False),
]
# The second ladder (dd-2, configured for these tests): its matches, after the dd-1 ones.
SCHEDULE_DD2: list[tuple[tuple[str, ...], int]] = [
    (("digger", "mole"), 31),
    (("dice", "pebble", "digger"), 32),
    (("mole", "digger", "dice", "pebble"), 33),
]
LADDERS = {
    "dd-1": {"ruleset": "dd-1", "difficulty": "normal", "seats": (2, 4)},
    "dd-2": {"ruleset": "dd-2", "difficulty": "normal", "seats": (2, 4)},
}
# Bots without games yet (new on the ladder), so the leaderboard has more than one page of 10.
NEWCOMERS = (
    "obsidian", "torchlight", "redstone", "lapis", "cobble", "gravel", "quartz", "basalt", "tuff",
)  # fmt: skip


def _play(engine: str, seated: tuple[str, ...], seed: int, bots: dict[str, int], **kw: Any) -> int:
    from ladder.matches.creation import match_create
    from workers.queued_match import play_queued_match
    from workers.runner import EnginePool

    match = match_create(bot_ids=[bots[n] for n in seated], seed=seed, **kw)
    report = play_queued_match(match.pk, worker="web-tests", engines=EnginePool(engine))
    assert report.status == "finished", report.line()
    return match.pk


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """Make sure the test database exists even when only browser tests run.

    pytest-django creates it for tests that use ``db``/``live_server``; the
    browser tests use neither (a transactional flush per test would wipe the
    played ladder), so when they run alone the database is set up here.
    """
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    with django_db_blocker.unblock():
        test_name = connection.creation._get_test_db_name()
        ours = None
        if connection.settings_dict["NAME"] != test_name:
            ours = setup_databases(verbosity=0, interactive=False, aliases={"default"})
    yield
    if ours is not None:
        with django_db_blocker.unblock():
            teardown_databases(ours, verbosity=0)


@pytest.fixture(scope="module")
def played_ladder(
    django_db_setup: Any, django_db_blocker: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PlayedLadder]:
    from examples.hosted_bundle import build
    from ladder.accounts.models import User
    from ladder.bots.services import bot_create, bot_suspend, bot_version_upload
    from ladder.matches.creation import match_create
    from ladder.tournaments.models import Tournament
    from workers.sandbox import sandbox_check
    from workers.smoke import play_smoke_match

    tmp = tmp_path_factory.mktemp("played-ladder")
    rest = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": dict(HIGH_RATES)}
    overrides = override_settings(
        LADDER_LADDERS=LADDERS,
        LADDER_DEFAULT_LADDER="dd-1",  # the played ladder's matches are on it
        LADDER_DEV_MODE=True,
        MEDIA_ROOT=str(tmp / "media"),
        REST_FRAMEWORK=rest,
        # Sign-ins in every test: a fast hasher keeps them from dominating the run.
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
    )
    overrides.enable()
    engine = start_engine(tmp)
    heuristic = start_bot("examples.heuristic_bot", tmp, "heuristic")
    rand = start_bot("examples.random_bot", tmp, "random", "--seed", "5")
    try:
        with django_db_blocker.unblock():
            users = {
                name: User.objects.create_user(username=name, password=PASSWORD)
                for name in ("alice", "bob", "carol")
            }
            users["mod"] = User.objects.create_user(
                username="mod", password=PASSWORD, is_staff=True
            )
            remote = {
                "digger": ("alice", heuristic.address),
                "dice": ("alice", rand.address),
                "mole": ("bob", heuristic.address),
                "pebble": ("bob", rand.address),
                "ghost": ("carol", closed_port_address()),
            }
            bots = {
                name: bot_create(owner=users[owner], name=name, kind="remote", endpoint=endpoint).pk
                for name, (owner, endpoint) in remote.items()
            }
            # Bob's hosted bot: the house heuristic bot uploaded as its author would.
            hosted = bot_create(owner=users["bob"], name="lurker", kind="hosted")
            filename, bundle = build("heuristic")
            lurker_v1 = bot_version_upload(
                user=users["bob"], bot_id=hosted.pk, filename=filename, data=bundle
            )
            bots["lurker"] = hosted.pk
            for name in NEWCOMERS:
                filler = bot_create(
                    owner=users["carol"],
                    name=name,
                    kind="remote",
                    endpoint=rand.address,
                )
                bots[filler.name] = filler.pk
            cup = Tournament.objects.create(name="Autumn Cup")
            cup.participants.set([bots[n] for n in ("digger", "dice", "mole", "pebble")])
            finished = [
                _play(engine.address, seated, seed, bots, tournament=cup if in_cup else None)
                for seated, seed, in_cup in SCHEDULE
            ]
            on_dd2 = [
                _play(engine.address, seated, seed, bots, ladder="dd-2")
                for seated, seed in SCHEDULE_DD2
            ]
            finished += on_dd2
            # Its smoke match, then a match in the sandbox: its seat log is bob's alone.
            hosted_match = None
            if not sandbox_check():
                smoked = play_smoke_match(version_id=lurker_v1.pk, engine_address=engine.address)
                assert smoked.status == "valid", smoked.smoke_outcome
                hosted_match = _play(engine.address, ("lurker", "dice"), 41, bots)
                finished.append(hosted_match)
            bot_suspend(
                user=users["mod"], bot_id=bots["ghost"], reason="endpoint unreachable in matches"
            )
            queued = match_create(
                bot_ids=[bots["dice"], bots["mole"]], requested_by=users["alice"]
            ).pk
        yield PlayedLadder(
            users={k: v.username for k, v in users.items()},
            bots=bots,
            finished=finished,
            on_dd2=on_dd2,
            hosted_match=hosted_match,
            queued=queued,
            tournament=cup.pk,
            endpoint=heuristic.address,
        )
    finally:
        for proc in (engine, heuristic, rand):
            proc.stop()
        with django_db_blocker.unblock():
            call_command("flush", interactive=False, verbosity=0)
            # Playwright's greenlets give this code its own connection (Django's are
            # per context): close it, or the test database cannot be dropped.
            connections.close_all()
        overrides.disable()


@pytest.fixture(scope="module")
def site(played_ladder: PlayedLadder, django_db_blocker: Any) -> Iterator[str]:
    """pytest-django's live server thread on the played ladder (module-scoped, no flush per test).

    Its request threads need the database, so access stays unblocked while it runs.
    """
    from pytest_django.live_server_helper import LiveServer

    with django_db_blocker.unblock():
        server = LiveServer("127.0.0.1:0")
        yield server.url
        server.stop()


@pytest.fixture(scope="module")
def orm(django_db_blocker: Any) -> Callable[[], AbstractContextManager[None]]:
    """Database access for checks inside the module's committed data."""
    return django_db_blocker.unblock


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    playwright_api = pytest.importorskip("playwright.sync_api")
    executable = chromium_path()
    with playwright_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


class Page:
    """A browser tab that records console errors and failed requests, and saves screenshots."""

    def __init__(self, page: Any, base: str) -> None:
        self.page = page
        self.base = base
        self.errors: list[str] = []
        self.expected_statuses: set[int] = set()
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        page.on("requestfailed", self._request_failed)

    def _request_failed(self, request: Any) -> None:
        # A navigation cancels what the page was still loading (a favicon): not a failure.
        if request.failure != "net::ERR_ABORTED":
            self.errors.append(f"request failed: {request.url} ({request.failure})")

    def _console(self, message: Any) -> None:
        text = message.text
        # Chromium logs every 4xx document as a failed resource; expected ones are not errors.
        if any(f"status of {code}" in text for code in self.expected_statuses):
            return
        if message.type in ("error", "warning"):
            self.errors.append(f"console {message.type}: {text}")

    def goto(self, path: str, *, status: int = 200) -> Any:
        if status >= 400:
            self.expected_statuses.add(status)
        response = self.page.goto(self.base + path)
        assert response is not None and response.status == status, (path, response)
        return response

    def shot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        out = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(out), full_page=True)
        return out


@pytest.fixture
def tab(browser: Any, site: str) -> Iterator[Page]:
    """A fresh browser context (no cookies) per test; fails the test on console errors."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.set_default_timeout(15_000)
    page = Page(context.new_page(), site)
    yield page
    context.close()
    assert not page.errors, page.errors
