"""The Content-Security-Policy, in a real browser (Debian's Chromium via Playwright).

Every page of the site carries the policy; the main pages (the viewer playing a
replay included) work under it with no violation in the console (the ``tab``
fixture fails a test on any console error, and a violation is one); and a script
injected into a page, inline or as an event handler, does not run.
"""

from __future__ import annotations

import urllib.request

import pytest

from tests.support.browser import wait_for_js
from tests.web.conftest import Page, PlayedLadder

pytestmark = pytest.mark.timeout(240)

VIOLATIONS = """() => {
  window.__csp = [];
  document.addEventListener('securitypolicyviolation',
    e => window.__csp.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline')));
}"""


def policy(site: str, path: str) -> dict[str, str]:
    """The page's policy, by directive."""
    with urllib.request.urlopen(site + path, timeout=10) as reply:
        header = reply.headers.get("Content-Security-Policy", "")
    return {d.strip().split(" ", 1)[0]: d.strip().partition(" ")[2] for d in header.split(";") if d}


def pages(played: PlayedLadder) -> list[str]:
    bot = next(iter(played.bots.values()))
    return [
        "/",
        f"/bots/{bot}/",
        f"/matches/{played.finished[0]}/",
        "/tournaments/",
        f"/tournaments/{played.tournament}/",
        "/now/",
        "/accounts/login/",
        "/replays/",
        f"/replays/matches/{played.finished[0]}/",
        "/api/docs/",
        "/admin/login/",
    ]


def test_every_page_carries_the_policy(site: str, played_ladder: PlayedLadder) -> None:
    for path in pages(played_ladder):
        csp = policy(site, path)
        assert csp["script-src"].startswith("'self'"), (path, csp)
        assert csp["object-src"] == csp["base-uri"] == csp["frame-ancestors"] == "'none'"
        assert "unsafe" not in csp["script-src"] and "unsafe" not in csp["default-src"]
        # Styles inline only where the Swagger UI needs them (its own <style> elements).
        assert ("unsafe-inline" in csp["style-src"]) == (path == "/api/docs/"), (path, csp)


def test_the_main_pages_work_under_it(tab: Page, played_ladder: PlayedLadder) -> None:
    tab.page.add_init_script(f"({VIOLATIONS})()")
    tab.expected_statuses.add(404)  # the admin's pages name no favicon: /favicon.ico is 404
    for path in pages(played_ladder):
        tab.goto(path)
        tab.page.wait_for_load_state("networkidle")
        assert tab.page.evaluate("window.__csp") == [], path
    # The viewer plays a replay (its script, its timeline request, its drawing).
    tab.goto(f"/matches/{played_ladder.finished[0]}/")
    tab.page.wait_for_selector("#replay-viewer [data-ddv][data-loaded=true]")
    tab.page.locator("#replay-viewer [data-role=play]").click()
    wait_for_js(tab.page, "Number(document.querySelector('[data-ddv]').dataset.pos) >= 2")
    assert tab.page.evaluate("window.__csp") == []
    # The API docs render their operations (their script comes from a URL, not inline).
    tab.goto("/api/docs/")
    tab.page.wait_for_selector(".opblock", timeout=30_000)
    assert tab.page.evaluate("window.__csp") == []


def test_an_injected_script_does_not_run(tab: Page, played_ladder: PlayedLadder) -> None:
    tab.page.add_init_script(f"({VIOLATIONS})()")
    tab.goto("/")
    ran = tab.page.evaluate(
        """() => new Promise(resolve => {
          window.__ran = [];
          const s = document.createElement('script');
          s.textContent = "window.__ran.push('inline')";
          document.body.appendChild(s);
          const img = document.createElement('img');
          img.setAttribute('onerror', "window.__ran.push('handler')");
          img.src = 'data:,broken';
          document.body.appendChild(img);
          const a = document.createElement('a');
          a.href = "javascript:window.__ran.push('url')";
          document.body.appendChild(a);
          a.click();
          setTimeout(() => resolve(window.__ran), 500);
        })"""
    )
    assert ran == []
    blocked = tab.page.evaluate("window.__csp")
    assert any(v.startswith("script-src") for v in blocked), blocked
    # Chromium logs each blocked script as a console error: these were expected.
    tab.errors = [e for e in tab.errors if "Content Security Policy" not in e]
