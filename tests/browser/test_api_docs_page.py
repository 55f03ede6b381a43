"""The API docs page, opened in a real headless Chromium with every host but loopback unreachable.

If the Swagger UI renders the operations there, it needs no CDN: every asset
comes from the ladder itself.
"""

from __future__ import annotations

import os
import re
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import CHROMIUM_FLAGS, chromium_path, start_runserver

# Headless, and no host but loopback: a page that needs a CDN fails here.
DUMP_FLAGS = [*CHROMIUM_FLAGS, "--virtual-time-budget=15000"]


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_path()


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`manage.py runserver` on a fresh SQLite database, as an operator starts it."""
    var = tmp_path_factory.mktemp("var")
    env = {**os.environ, "LADDER_VAR_DIR": str(var), "DJANGO_DEBUG": "1"}
    env.pop("DATABASE_URL", None)
    server = start_runserver(env, var, probe="/api/schema/")
    yield f"http://{server.address}"
    server.stop(timeout_s=10)


def render(chromium: str, url: str, tmp_path: Path) -> str:
    out = subprocess.run(
        [chromium, *DUMP_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_docs_page_references_no_outside_host(web: str) -> None:
    with urllib.request.urlopen(f"{web}/api/docs/", timeout=10) as reply:
        html = reply.read().decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert sources, "the docs page loads no assets at all?"
    outside = [s for s in sources if re.match(r"(https?:)?//", s)]
    assert not outside, f"assets from outside the ladder: {outside}"


def test_swagger_ui_renders_every_api_in_a_browser_offline(
    chromium: str, web: str, tmp_path: Path
) -> None:
    dom = render(chromium, f"{web}/api/docs/", tmp_path)
    paths = set(re.findall(r'class="opblock-summary-path" data-path="([^"]+)"', dom))
    for expected in ("/api/v1/leaderboard/", "/api/v1/bots/", "/api/v1/matches/{match_id}/"):
        assert expected in paths, f"{expected} not rendered; rendered: {sorted(paths)}"
    assert "Digging Down Ladder API" in dom
