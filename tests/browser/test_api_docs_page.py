"""The API docs page, opened in a real headless Chromium with every host but loopback unreachable.

If the Swagger UI renders the operations there, it needs no CDN: every asset
comes from the ladder itself.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Flags that keep Chromium from reaching for the network on its own (see the machine notes).
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--virtual-time-budget=15000",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def chromium() -> str:
    if CHROMIUM is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed; .ci/run installs it")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return CHROMIUM


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`manage.py runserver` on a fresh SQLite database, as an operator starts it."""
    var = tmp_path_factory.mktemp("var")
    env = {**os.environ, "LADDER_VAR_DIR": str(var), "DJANGO_DEBUG": "1"}
    env.pop("DATABASE_URL", None)
    manage = [sys.executable, str(ROOT / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, cwd=ROOT, check=True, timeout=120)
    port = free_port()
    log = (var / "runserver.log").open("w")
    proc = subprocess.Popen(
        [*manage, "runserver", "--noreload", f"127.0.0.1:{port}"],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(f"{base}/api/schema/", timeout=2) as reply:
                if reply.status == 200:
                    break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"runserver did not come up: {(var / 'runserver.log').read_text()}")
            time.sleep(0.2)
    yield base
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


def render(chromium: str, url: str, tmp_path: Path) -> str:
    out = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", url],
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
