"""A new author's whole journey in a real headless Chromium (Debian's, driven by Playwright).

Sign up, create a hosted bot, upload it (twice), see it play, start a version
comparison and read its answer as the page fills in by itself, then watch a
running match live. Everything behind the pages is real: pytest-django's live
server on the test database, a real engine process, house bots as gRPC server
processes, hosted versions smoke-tested in the sandbox, and every match played by
what a worker runs (``workers.queued_match.play_queued_match``), here in a thread
of the test. The live match is checked against its own replay: every view that
reached the page equals what a seat saw at that point, minus the seat — so no
face-down card and no seed ever reached the page before it was revealed.
"""

from __future__ import annotations

import gzip
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_replay_viewer import browser  # noqa: F401  (the Chromium fixture)
from tests.support.browser import wait_for_js
from tests.support.processes import BOT_SERVICE, ROOT, start, start_bot, start_engine
from tests.support.replays import observation_at
from tests.support.sandbox import require_sandbox

pytestmark = [pytest.mark.timeout(420)]
PASSWORD = "journey-cave-torch-7"
# A remote bot that thinks a while: long enough a match to be watched step by step.
SLOW_BOT = """
import sys, time
sys.path.insert(0, EXAMPLES)
from first_bot import act as first_act
from digdown.bot import parse_args, serve

def act(observation, legal_actions):
    time.sleep(0.3)
    return first_act(observation, legal_actions)

args = parse_args(None, "a slow bot")
serve(act, listen=args.listen, name="slow", port_file=args.port_file)
""".replace("EXAMPLES", repr(str(ROOT / "examples")))
SECOND_VERSION = (ROOT / "examples" / "first_bot.py").read_text()


@pytest.fixture(scope="module")
def procs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("journey")
    slow = tmp / "slow_bot.py"
    slow.write_text(SLOW_BOT)
    started = {
        "engine": start_engine(tmp),
        "heuristic": start_bot("examples.heuristic_bot", tmp, "heuristic"),
        "random": start_bot("examples.random_bot", tmp, "random", "--seed", "3"),
        "slow": start([str(slow)], tmp, "slow", health_service=BOT_SERVICE),
    }
    yield started
    for proc in started.values():
        proc.stop()


def play_queued(engine: str) -> list[int]:
    """Play every queued match, as a worker would; their ids."""
    from ladder.matches.models import Match
    from workers.queued_match import play_queued_match
    from workers.runner import EnginePool

    played = []
    for pk in (
        Match.objects.filter(status=Match.Status.QUEUED).order_by("id").values_list("pk", flat=True)
    ):
        report = play_queued_match(pk, worker="journey", engines=EnginePool(engine))
        assert report.status == "finished", report.line()
        played.append(pk)
    return played


def smoke_newest(bot_name: str, engine: str) -> None:
    from ladder.bots.models import BotVersion
    from workers.smoke import play_smoke_match

    version = BotVersion.objects.filter(bot__name=bot_name).order_by("-number").first()
    assert version is not None
    smoked = play_smoke_match(version_id=version.pk, engine_address=engine)
    assert smoked.status == "valid", smoked.smoke_outcome


def test_sign_up_upload_play_compare_and_watch_live(
    browser: Any,  # noqa: F811  (the Chromium fixture)
    live_server: Any,
    transactional_db: Any,
    procs: dict[str, Any],
    settings: Any,
    tmp_path: Path,
) -> None:
    require_sandbox()
    from ladder.accounts.models import User
    from ladder.bots.models import Bot
    from ladder.bots.services import bot_create
    from ladder.matches.creation import match_create

    settings.LADDER_DEV_MODE = True  # the house bots listen on loopback
    settings.MEDIA_ROOT = str(tmp_path / "media")
    engine = procs["engine"].address
    house = User.objects.create_user(username="house", password="house-pw-12345")
    bot_create(owner=house, name="heuristic", kind="remote", endpoint=procs["heuristic"].address)
    bot_create(owner=house, name="dicey", kind="remote", endpoint=procs["random"].address)
    errors: list[str] = []
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    context.set_default_timeout(30_000)
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
    base = live_server.url

    # Sign up: Django's password rules say no first, then the account is made.
    page.goto(base + "/")
    page.click("text=Sign up")
    page.fill("#id_username", "newcomer")
    page.fill("#id_password1", "password")
    page.fill("#id_password2", "password")
    page.click("#signup-form button[type=submit]")
    assert "too common" in page.inner_text("#signup-form")
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.click("#signup-form button[type=submit]")
    page.wait_for_url(base + "/me/")
    assert page.is_visible("#first-token")

    # Create a hosted bot and upload the starter bot as its first version.
    page.fill("#id_name", "newbie")
    page.check("#bot-create-form input[name=kind][value=hosted]")
    page.click("#bot-create-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/me/bots/\d+/$"))
    manage = page.url
    page.set_input_files("#id_file", str(ROOT / "examples" / "starter_bot.py"))
    page.click("#upload-form button[type=submit]")
    page.wait_for_url(manage)
    smoke_newest("newbie", engine)
    second = tmp_path / "bot.py"
    second.write_text(SECOND_VERSION)
    page.set_input_files("#id_file", str(second))
    page.click("#upload-form button[type=submit]")
    page.wait_for_url(manage)
    smoke_newest("newbie", engine)

    # See it play: a challenge against the house's heuristic bot.
    page.goto(manage)
    page.fill("#challenge-form #id_opponents", "heuristic")
    page.click("#challenge-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/matches/\d+/$"))
    challenge = int(page.url.rstrip("/").rsplit("/", 1)[1])
    assert play_queued(engine) == [challenge]
    page.reload()
    assert "finished" in page.inner_text("main")
    assert page.is_visible("#replay-download")

    # Compare v2 with v1 over two deals: the page fills in by itself.
    page.goto(manage)
    page.select_option("#id_compare-new_version", "2")
    page.select_option("#id_compare-old_version", "1")
    page.fill("#id_compare-opponents", "dicey")
    page.fill("#id_compare-deals", "2")
    page.click("#compare-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/me/comparisons/\d+/$"))
    assert "No answer yet" in page.inner_text("#answer-words")
    played = play_queued(engine)
    assert len(played) == 8  # 2 deals x 2 versions x 2 seat rotations
    wait_for_js(page, "document.querySelector('#answer-words').dataset.status === 'finished'", 60.0)
    answer = page.inner_text("#answer-words")
    assert "over 2 deals" in answer and "95% interval" in answer, answer
    assert page.locator("#comparison-deals .replay-link").count() == 8
    # The versions' own ratings are a click away: the bot page's lineage.
    assert page.locator("a[href$='#lineage-h']").count() == 1

    # Watch a running match live, then its full replay.
    user = User.objects.get(username="newcomer")
    slow = bot_create(owner=user, name="sloth", kind="remote", endpoint=procs["slow"].address)
    rival = Bot.objects.get(name="heuristic")  # a long game: the rival is a strong player
    live_match = match_create(bot_ids=[slow.pk, rival.pk], requested_by=user)
    bodies: list[dict[str, Any]] = []

    def record(route: Any) -> None:
        response = route.fetch()
        bodies.append(json.loads(response.text()))
        route.fulfill(response=response)

    page.route(re.compile(r".*/api/v1/matches/\d+/live/$"), record)
    page.goto(f"{base}/replays/matches/{live_match.pk}/live/")
    worker = threading.Thread(target=play_queued, args=(engine,), daemon=True)
    worker.start()
    wait_for_js(
        page, "Number(document.querySelector('[data-ddv]').dataset.liveSteps || 0) >= 2", 90.0
    )
    assert page.get_attribute("[data-ddv]", "data-live-status") == "running"
    assert "Live" in page.inner_text("[data-role=pos]")
    page.wait_for_url(f"{base}/replays/matches/{live_match.pk}/", timeout=120_000)
    worker.join(60)
    page.wait_for_selector("[data-ddv][data-loaded=true]")

    # Every view the page was given is exactly a seat's observation at that point, less
    # the seat: nothing hidden (no face-down card, no seed) reached it before its time.
    live_match.refresh_from_db()
    with live_match.replay.open("rb") as f:
        doc = json.loads(gzip.decompress(f.read()))
    frames = [b for b in bodies if b.get("live") and "view" in b]
    assert len(frames) >= 2
    for frame in frames:
        seen = observation_at(doc, frame["ply"], 0)
        seen.pop("seat")
        assert frame["view"] == seen, f"ply {frame['ply']}"
        assert "seed" not in json.dumps(frame)
        assert frame["ply"] < len(doc["decisions"])
    assert not errors, errors
    context.close()
