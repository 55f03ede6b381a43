"""The site as deployed: ``DJANGO_DEBUG=0``, ``collectstatic``, WhiteNoise, real server process.

Static files come from STATIC_ROOT under hashed names with a far-future cache
header; error pages are the site's own, with no stack trace.
"""

from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from tests.support.processes import start_runserver

pytestmark = pytest.mark.timeout(180)


def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as reply:
            return reply.status, dict(reply.headers), reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


@pytest.fixture(scope="module")
def production(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    var = tmp_path_factory.mktemp("prod-var")
    env = {**os.environ, "LADDER_VAR_DIR": str(var), "DJANGO_DEBUG": "0",
           "DJANGO_SECRET_KEY": "test-only-" + "k" * 40, "PYTHONUNBUFFERED": "1"}  # fmt: skip
    env.pop("DATABASE_URL", None)
    server = start_runserver(
        env, var, setup=[["migrate", "-v0"], ["collectstatic", "--noinput", "-v0"]]
    )
    yield f"http://{server.address}"
    server.stop(timeout_s=10)


def test_static_files_are_hashed_and_cached_forever(production: str) -> None:
    status, _, body = fetch(production + "/")
    html = body.decode()
    assert status == 200
    assets = re.findall(r'(?:href|src)="(/static/[^"]+)"', html)
    assert any(re.search(r"/site\.[0-9a-f]{12}\.css$", a) for a in assets), assets
    assert any(re.search(r"/site\.[0-9a-f]{12}\.js$", a) for a in assets), assets
    for asset in assets:
        status, headers, content = fetch(production + asset)
        assert status == 200 and content, asset
        assert "immutable" in headers.get("Cache-Control", ""), (asset, headers)
    assert not re.findall(r'(?:href|src)="(?:https?:)?//', html)  # nothing from elsewhere


def test_error_pages_without_stack_traces(production: str) -> None:
    status, headers, body = fetch(production + "/no/such/page/")
    page = body.decode()
    assert status == 404 and headers["Content-Type"].startswith("text/html")
    assert "Nothing down here" in page and "Traceback" not in page and "urlpatterns" not in page
    status, headers, body = fetch(production + "/bots/123456/")
    assert status == 404 and "No such bot." in body.decode()
    status, headers, body = fetch(production + "/api/v1/bots/123456/")
    assert status == 404 and headers["Content-Type"] == "application/json"


def test_sign_in_page_sets_a_csrf_cookie(production: str) -> None:
    status, headers, body = fetch(production + "/accounts/login/")
    assert status == 200 and "csrftoken=" in headers.get("Set-Cookie", "")
    assert 'name="csrfmiddlewaretoken"' in body.decode()


def test_vendored_library_is_served_with_its_licence(production: str) -> None:
    status, _, body = fetch(production + "/static/web/vendor/uplot-1.6.32/LICENSE")
    assert status == 200 and b"MIT License" in body
