"""The replay viewer in a real headless Chromium (Debian's, driven by Playwright).

The match is really played: a real engine and real remote bots (two house bots,
one that only answers illegal actions, so it faults three times and forfeits,
and one whose process dies, a forfeit of a dead bot), each its own process on
loopback, driven by the runner and verified by the engine; then recorded
through the ladder's services and shown by pytest-django's live server. Every
request the page makes must go to the live server; no console errors;
screenshots land in test-artifacts/viewer/.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.timeline import record_of
from engine.verify import verify
from tests.support.browser import CHROMIUM, CHROMIUM_FLAGS, wait_for_js
from tests.support.matches import needed
from tests.support.replays import PlayedMatch, gz, observation_at, play_real, state_at

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS_DIR", ROOT / "test-artifacts")) / "viewer"
LOADED = "[data-ddv][data-loaded=true]"
BOTS = [
    ("digger", "examples.heuristic_bot", ()),
    ("rogue", "illegal_bot.py", ()),
    ("miner", "examples.heuristic_bot", ()),
    ("crash", "crash_bot.py", ("--after", "3")),
]

pytestmark = [pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    needed("chromium (apt-get install chromium)", CHROMIUM is not None)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        needed("the playwright package (the test extras)", False)
    # Playwright's sync API keeps an asyncio loop in this thread; the ORM calls of the
    # tests are still plain synchronous code (Django's docs name this case).
    old = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as pw:
            chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
            yield chromium
            chromium.close()
    finally:
        if old is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = old


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> PlayedMatch:
    return play_real(tmp_path_factory.mktemp("viewer-play"), BOTS, seed=22, difficulty="normal")


@pytest.fixture
def match(played: PlayedMatch, settings: Any, tmp_path: Path) -> Any:
    """The played match, recorded by the ladder (result, replay file, ratings)."""
    from ladder.accounts.models import User
    from ladder.bots.services import bot_create
    from ladder.matches.claims import match_start
    from ladder.matches.creation import match_create
    from ladder.matches.recording import match_record_result

    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.LADDER_DEV_MODE = True  # the bots' endpoints are on loopback
    owner = User.objects.create_user(username="author", password="pw-12345678")
    bots = [
        bot_create(owner=owner, name=name, kind="remote", endpoint=seat["address"])
        for (name, _, _), seat in zip(BOTS, played.doc["seats"], strict=True)
    ]
    created = match_create(bot_ids=[b.pk for b in bots], seed=played.seed)
    match_start(match_id=created.pk, worker="browser-test")
    return match_record_result(
        match_id=created.pk, result=played.outcome.result, replay_bytes=played.data
    ).match


class Page:
    """A Chromium page that fails the test on console errors or requests to other hosts."""

    def __init__(self, browser: Any, base: str, name: str, allowed_errors: int = 0) -> None:
        self.page = browser.new_page(viewport={"width": 1400, "height": 1000})
        self.base = base
        self.name = name
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.allowed_errors = allowed_errors
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("dialog", lambda d: (self.errors.append(f"dialog: {d.message}"), d.dismiss()))
        self.page.route("**/*", self._only_the_ladder)
        self.page.set_default_timeout(20_000)

    def _only_the_ladder(self, route: Any) -> None:
        url = route.request.url
        if url.startswith(self.base) or url.startswith("data:"):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def open(self, path: str) -> Any:
        self.page.goto(self.base + path)
        return self.page

    def state(self) -> dict[str, Any]:
        return self.page.evaluate(
            """() => {
              const root = document.querySelector('[data-ddv]');
              const who = root.querySelector('[data-role=decision-seat]');
              const kind = root.querySelector('[data-role=decision-kind]');
              return {pos: Number(root.dataset.pos), hash: location.hash,
                      seat: who && !root.querySelector('[data-role=decision]').hidden
                            ? Number(who.dataset.seat) : null,
                      kind: kind ? kind.textContent : null,
                      end: !root.querySelector('[data-role=end]').hidden};
            }"""
        )

    def keys_to_page(self) -> None:
        """Keys go to the page, not to a control that has the focus (the slider, a button)."""
        self.page.evaluate("document.activeElement && document.activeElement.blur()")

    def shot(self, label: str) -> None:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{self.name}-{label}.png"), full_page=True)

    def close(self) -> None:
        self.page.close()
        assert not self.outside, f"requests outside the ladder: {self.outside}"
        assert len(self.errors) <= self.allowed_errors, f"console errors: {self.errors}"


@pytest.fixture
def page(browser: Any, live_server: Any, request: pytest.FixtureRequest) -> Iterator[Page]:
    p = Page(browser, live_server.url, request.node.name)
    yield p
    p.close()


def expected_kind(decision: dict[str, Any]) -> str:
    if "fault" in decision:
        return "fault"
    if "forfeit" in decision:
        return "forfeit"
    return "forced" if decision["forced"] else "chosen"


def test_step_through_a_real_match_to_its_ranks(
    page: Page, match: Any, played: PlayedMatch
) -> None:
    doc = played.doc
    kinds = [expected_kind(d) for d in doc["decisions"]]
    assert {"fault", "forfeit", "chosen"} <= set(kinds), "rogue faults, crash forfeits"
    pg = page.open(f"/replays/matches/{match.pk}/")
    pg.wait_for_selector(LOADED)
    assert pg.get_attribute("[data-ddv]", "data-decisions") == str(len(doc["decisions"]))
    page.keys_to_page()
    shot_fault = True
    for d, decision in enumerate(doc["decisions"]):
        state = page.state()
        assert (state["pos"], state["seat"], state["kind"]) == (d, decision["seat"], kinds[d])
        if kinds[d] == "fault" and shot_fault:
            page.shot("fault")
            legal = pg.locator("[data-role=legal] li.ddv-default")
            assert legal.count() == 1 and "default played" in legal.inner_text()
            shot_fault = False
        pg.keyboard.press("ArrowRight")
    state = page.state()
    assert state["end"] and state["pos"] == len(doc["decisions"])
    rows = pg.locator("[data-role=ranks] tbody tr")
    shown = {
        int(rows.nth(i).get_attribute("data-seat")): int(rows.nth(i).get_attribute("data-rank"))
        for i in range(rows.count())
    }
    assert [shown[s] for s in range(4)] == played.outcome.ranks
    assert [s.rank for s in match.seats.order_by("seat")] == played.outcome.ranks
    reason = pg.inner_text("[data-role=end] [data-role=reason]")
    assert played.outcome.result["reason"].replace("_", " ") in reason
    for seat in match.seats.order_by("seat"):
        cell = rows.locator(f"xpath=self::tr[@data-seat='{seat.seat}']/td[@data-role='rating']")
        assert f"{seat.rating_after / 100:.2f}" in cell.inner_text()
    page.shot("end")


def test_the_viewer_on_the_match_page_and_the_sites_frame(
    page: Page, match: Any, played: PlayedMatch
) -> None:
    """The match page embeds the viewer; the viewer's own pages are in the site's frame."""
    pg = page.open(f"/matches/{match.pk}/")
    pg.wait_for_selector(f"#replay-viewer {LOADED}")
    assert pg.locator("header.site nav").is_visible()
    page.keys_to_page()
    pg.keyboard.press(" ")  # plays on its own
    wait_for_js(pg, "Number(document.querySelector('[data-ddv]').dataset.pos) >= 3")
    pg.keyboard.press("End")
    rows = pg.locator("#replay-viewer [data-role=ranks] tbody tr")
    shown = {
        int(r.get_attribute("data-seat")): int(r.get_attribute("data-rank")) for r in rows.all()
    }
    assert [shown[s] for s in range(4)] == played.outcome.ranks
    assert f"#d={len(played.doc['decisions'])}" in pg.url
    page.shot("match-page")
    for path, heading in ((f"/replays/matches/{match.pk}/", f"Replay of match #{match.pk}"),
                          ("/replays/", "Replay viewer")):  # fmt: skip
        pg = page.open(path)
        assert pg.locator("header.site nav").is_visible() and pg.locator("footer.site").count()
        assert pg.get_by_role("heading", level=1).inner_text() == heading
    missing = pg.request.get(page.base + "/replays/matches/999999/")
    assert missing.status == 404 and "Nothing down here" in missing.text()  # the site's 404


def test_slider_keyboard_and_event_log_jump(page: Page, match: Any, played: PlayedMatch) -> None:
    doc = played.doc
    last = len(doc["decisions"])
    a, b = last // 4, last * 2 // 3
    pg = page.open(f"/replays/matches/{match.pk}/#d={a}")
    pg.wait_for_selector(LOADED)
    assert page.state()["pos"] == a  # the address keeps the position
    pg.locator("[data-role=slider]").fill(str(b))
    assert (page.state()["pos"], page.state()["hash"]) == (b, f"#d={b}")
    pg.reload()
    pg.wait_for_selector(LOADED)
    assert page.state()["pos"] == b
    page.keys_to_page()
    for key, pos in [("ArrowLeft", b - 1), ("ArrowRight", b), ("Home", 0), ("End", last)]:
        pg.keyboard.press(key)
        assert page.state()["pos"] == pos, key
    # Rounds: PageUp/PageDown land on the first decision of a round, as the engine counts.
    rounds = [state_at(doc, d).round for d in range(last + 1)]
    starts = [d for d in range(last + 1) if d == 0 or rounds[d] != rounds[d - 1]]
    assert len(starts) >= 3, "the fixed seed plays several rounds"
    pg.keyboard.press("Home")
    for start in starts[1:3]:
        pg.keyboard.press("PageDown")
        assert page.state()["pos"] == start
    pg.keyboard.press("Shift+ArrowLeft")
    assert page.state()["pos"] == starts[1]
    # The event log: a click jumps to the decision whose events include it.
    faults = [i for i, e in enumerate(doc["events"]) if e["kind"] == "FAULT"]
    owner = next(
        d for d, dec in enumerate(doc["decisions"])
        if dec["first_event"] <= faults[1] < dec["first_event"] + dec["num_events"]
    )  # fmt: skip
    item = pg.locator(f"[data-role=log] li[data-i='{faults[1]}']")
    item.scroll_into_view_if_needed()
    item.click()
    assert page.state()["pos"] == owner and page.state()["kind"] == "fault"
    assert "ddv-now" in (item.get_attribute("class") or "")
    page.shot("event-log")
    # Space plays and pauses.
    page.keys_to_page()
    pg.keyboard.press("Home")
    pg.keyboard.press(" ")
    wait_for_js(pg, "Number(document.querySelector('[data-ddv]').dataset.pos) >= 3")
    pg.keyboard.press(" ")
    stopped = page.state()["pos"]
    assert pg.get_attribute("[data-ddv]", "data-playing") is None
    pg.wait_for_timeout(600)
    assert page.state()["pos"] == stopped


def test_what_seat_2_saw_is_the_engine_observation(
    page: Page, match: Any, played: PlayedMatch
) -> None:
    doc = played.doc
    asked = [
        d for d, dec in enumerate(doc["decisions"])
        if dec["seat"] == 2 and "action" in dec and not dec["forced"]
    ]  # fmt: skip
    not_asked = next(d for d, dec in enumerate(doc["decisions"]) if dec["seat"] != 2 and d > 20)
    if asked:  # the rogue (seat 2) forfeits early; a real choice of it, if there was one
        checks = [asked[0], not_asked, len(doc["decisions"])]
    else:
        checks = [next(d for d, dec in enumerate(doc["decisions"]) if dec["seat"] == 2)]
        checks += [not_asked, len(doc["decisions"])]
    pg = page.open(f"/replays/matches/{match.pk}/#d={checks[0]}&view=seat-2")
    pg.wait_for_selector(LOADED)
    for d in checks:
        pg.evaluate(f"location.hash = '#d={d}&view=seat-2'")
        wait_for_js(pg, f"document.querySelector('[data-role=observation]').dataset.d === '{d}'")
        seen = json.loads(pg.inner_text("[data-role=observation]"))
        assert seen == observation_at(doc, d, 2), d
        title = pg.inner_text(".ddv-obs-box summary")
        sent = d < len(doc["decisions"]) and doc["decisions"][d]["seat"] == 2
        assert ("sent to seat 2" in title) == (sent and "forfeit" not in doc["decisions"][d])
    page.shot("seat-2")
    pg.click("[data-mode=full]")
    assert "view=full" in page.state()["hash"]
    cards = pg.locator("[data-role=cave] .ddv-face").count()
    remaining = sum(len(p) for p in state_at(doc, len(doc["decisions"])).passages)
    assert cards == remaining
    page.shot("full")


def drop_file(pg: Any, name: str, data: bytes) -> None:
    """Drop a file on the drop zone the way a browser does (a DataTransfer with a File)."""
    pg.evaluate(
        """([name, b64]) => {
          const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
          const transfer = new DataTransfer();
          transfer.items.add(new File([bytes], name, {type: 'application/gzip'}));
          const zone = document.querySelector('[data-role=drop]');
          zone.dispatchEvent(new DragEvent('dragover', {dataTransfer: transfer, bubbles: true}));
          zone.dispatchEvent(new DragEvent('drop', {dataTransfer: transfer, bubbles: true}));
        }""",
        [name, base64.b64encode(data).decode()],
    )


def test_a_dropped_replay_plays(page: Page, played: PlayedMatch, tmp_path: Path) -> None:
    doc = copy.deepcopy(played.doc)
    # Names are the runner's testimony, untrusted: they must show as text, never as HTML.
    doc["seats"][1]["bot"] = '<img src=x onerror="alert(1)">'
    pg = page.open("/replays/")
    drop_file(pg, "dropped.json.gz", gz(doc))
    pg.wait_for_selector(LOADED)
    assert pg.locator("[data-ddv] img").count() == 0
    assert '<img src=x onerror="alert(1)"> (seat 1)' in pg.inner_text("[data-role=seats]")
    page.keys_to_page()
    pg.keyboard.press("ArrowRight")
    assert page.state()["pos"] == 1 and page.state()["seat"] == doc["decisions"][1]["seat"]
    pg.keyboard.press("End")
    rows = pg.locator("[data-role=ranks] tbody tr")
    shown = {
        int(r.get_attribute("data-seat")): int(r.get_attribute("data-rank")) for r in rows.all()
    }
    assert [shown[s] for s in range(4)] == played.outcome.ranks
    page.shot("dropped")
    # The file picker opens a file as well.
    path = tmp_path / "picked.json.gz"
    path.write_bytes(played.data)
    pg.set_input_files("[data-role=file]", str(path))
    wait_for_js(
        pg, "document.querySelector('[data-role=seats]').innerText.includes('rogue (seat 1)')"
    )


def test_a_tampered_file_shows_the_verification_failure(
    browser: Any, live_server: Any, played: PlayedMatch
) -> None:
    doc = copy.deepcopy(played.doc)
    target = next(i for i, e in enumerate(doc["events"]) if e["kind"] == "MOVE" and i > 60)
    doc["events"][target]["passage"] = (doc["events"][target]["passage"] + 1) % 4
    verdict = verify(record_of(doc), doc["events"], doc["result"])
    assert not verdict.ok
    # The upload answers 422 (Chromium logs that failed request to the console): one allowed.
    page = Page(browser, live_server.url, "tampered", allowed_errors=1)
    pg = page.open("/replays/")
    drop_file(pg, "tampered.json.gz", gz(doc))
    pg.wait_for_selector("[data-role=banner]:not([hidden])")
    assert pg.inner_text("[data-role=difference]") == verdict.first_difference
    assert re.search(r"status of 422", " ".join(page.errors)), page.errors
    pg.wait_for_selector(LOADED)
    owner = next(
        d for d, dec in enumerate(doc["decisions"])
        if dec["first_event"] <= target < dec["first_event"] + dec["num_events"]
    )  # fmt: skip
    page.keys_to_page()
    pg.keyboard.press("End")
    assert page.state()["pos"] == owner  # shown up to the decision that departs from it
    assert "The replay stops here" in pg.inner_text("[data-role=end]")
    page.shot("tampered")
    page.close()
