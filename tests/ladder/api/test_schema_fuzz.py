"""The REST API against its own OpenAPI schema, on the production WSGI server.

Schemathesis (every check: no 5xx, documented status codes and content types,
responses that match their schema, schema-valid requests accepted and
schema-violating ones refused, the stateful links) drives the API that
``gunicorn -c ladder/gunicorn.conf.py`` serves on loopback, with
``DJANGO_DEBUG=0``, on the test database: once anonymously and once with an
API token. The run is bounded (a few examples per operation, a deadline per
run) so it stays in CI; ``tests/ladder/api/schemathesis.toml`` lists the few
operations whose input is checked beyond what a schema can say. Hand-written
edge requests that the generator rarely hits complete it: ids beyond 64 bits,
NUL in text, page sizes that are not numbers, a replay file gone from storage.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.processes import Proc, start_gunicorn
from tests.support.replays import gz, inprocess_replay
from tests.support.web_server import collect_static, production_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]
CONFIG = Path(__file__).with_name("schemathesis.toml")
EXAMPLES = int(os.environ.get("LADDER_FUZZ_EXAMPLES", "12"))
# A fixed seed keeps CI reproducible; LADDER_FUZZ_SEED=random explores (and prints its seed).
SEED = os.environ.get("LADDER_FUZZ_SEED", "20261130")
RUN_DEADLINE_S = 150.0


@pytest.fixture(scope="module")
def static_root(tmp_path_factory: pytest.TempPathFactory) -> str:
    return collect_static(tmp_path_factory.mktemp("static"))


@pytest.fixture
def server(
    transactional_db: Any, tmp_path: Path, settings: Any, static_root: str
) -> Iterator[Proc]:
    """gunicorn on the test database, as deployed (DEBUG off), limits out of the way."""
    env = production_env(media_root=settings.MEDIA_ROOT, static_root=static_root, tmp=tmp_path)
    proc = start_gunicorn(env, tmp_path)
    yield proc
    assert proc.stop(timeout_s=15) == 0, proc.log()[-3000:]


@pytest.fixture
def data(make_user: Any, make_bot: Any, token_for: Any) -> dict[str, Any]:
    """Committed rows for the operations that need some: bots, a finished match, a token."""
    from ladder.matches.claims import match_start
    from ladder.matches.creation import match_create
    from ladder.matches.recording import match_record_result

    owner = make_user("fuzz-owner")
    bots = [make_bot(owner, f"fuzz-{i}") for i in range(3)]
    match = match_create(bot_ids=[bots[0].pk, bots[1].pk], seed=3)
    match_start(match_id=match.pk, worker="fuzz")
    doc = inprocess_replay(seed=3, seats=2)  # a real one: its timeline is served too
    match = match_record_result(match_id=match.pk, result=doc["result"], replay_bytes=gz(doc)).match
    match_create(bot_ids=[bots[1].pk, bots[2].pk])  # one left queued
    return {"token": token_for(owner), "bots": bots, "match": match}


def _schemathesis(server: Proc, tmp_path: Path, *extra: str) -> None:
    """One bounded ``st run`` with every check; the test fails on any finding."""
    command = [
        sys.executable, "-m", "schemathesis.cli", "--config-file", str(CONFIG), "run",
        f"http://{server.address}/api/schema/", "--checks", "all",
        "--max-examples", str(EXAMPLES), "--workers", "1", "--no-color",
        "--report", "junit", "--report-dir", str(tmp_path / "report"), *extra,
    ]  # fmt: skip
    if SEED != "random":
        command += ["--seed", SEED]
    try:
        run = subprocess.run(
            command,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=RUN_DEADLINE_S,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"schemathesis ran past {RUN_DEADLINE_S} s:\n{str(exc.stdout)[-4000:]}")
    assert run.returncode == 0, run.stdout[-12000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and "failures" not in run.stdout.splitlines()[-1]
    # It reached the API: no 5xx reached gunicorn's log either.
    assert "Traceback" not in server.log(), server.log()[-4000:]


def test_schemathesis_anonymous(server: Proc, data: dict[str, Any], tmp_path: Path) -> None:
    _schemathesis(server, tmp_path)


def test_schemathesis_with_a_token(server: Proc, data: dict[str, Any], tmp_path: Path) -> None:
    # Revoking tokens is left to the anonymous run (401 there): with its own token the
    # run would revoke it and spend the rest unauthenticated.
    _schemathesis(
        server,
        tmp_path,
        "--header",
        f"Authorization: Bearer {data['token']}",
        "--exclude-path-regex",
        r"^/api/v1/tokens/\{",
    )


def _call(server: Proc, method: str, path: str, body: Any = None, token: str = "") -> Any:
    request = urllib.request.Request(
        f"http://{server.address}{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"}
        | ({"Authorization": f"Bearer {token}"} if token else {}),
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_edge_requests_get_4xx_with_a_reason(
    server: Proc, data: dict[str, Any], settings: Any
) -> None:
    token, bots, match = data["token"], data["bots"], data["match"]
    huge = 2**64
    cases = [
        ("POST", "/api/v1/matches/", {"bots": [bots[0].pk, huge]}, 400),
        ("POST", "/api/v1/matches/", {"bots": [bots[0].pk, str(bots[1].pk)]}, 400),
        ("POST", "/api/v1/matches/", {"bots": [bots[0].pk, bots[0].pk]}, 400),
        ("POST", "/api/v1/matches/", {"bots": [bots[0].pk, bots[1].pk], "rated": "yes"}, 400),
        ("POST", "/api/v1/tokens/", {"name": 0}, 400),
        ("POST", "/api/v1/tokens/", {"name": "a\x00b"}, 400),
        ("PATCH", f"/api/v1/bots/{bots[0].pk}/", {"description": 12}, 400),
        ("PATCH", f"/api/v1/bots/{bots[0].pk}/", {}, 400),
        ("GET", f"/api/v1/matches/?bot={huge}", None, 400),
        ("GET", f"/api/v1/matches/?tournament={huge}", None, 400),
        ("GET", "/api/v1/matches/?tournament=1.0", None, 400),
        ("GET", f"/api/v1/bots/{bots[0].pk}/rating-history/?limit=1e2", None, 400),
        ("GET", "/api/v1/matches/?ladder=a%00b", None, 400),
        ("GET", "/api/v1/bots/?search=a%00b", None, 400),
        ("GET", "/api/v1/bots/?page_size=ten", None, 400),
        ("GET", "/api/v1/matches/?page_size=0", None, 400),
        ("GET", f"/api/v1/matches/{huge}/", None, 404),
        ("GET", "/api/v1/bots/?page=999", None, 404),
    ]
    for method, path, body, expected in cases:
        status, content = _call(server, method, path, body, token)
        assert status == expected, (method, path, body, status, content[:300])
        assert json.loads(content)["detail"], (method, path)
    # Empty filters are filters not given.
    assert _call(server, "GET", "/api/v1/matches/?status=&ladder=&bot=")[0] == 200
    # A replay file gone from storage: 404 with a reason, never a 500.
    (Path(settings.MEDIA_ROOT) / match.replay.name).unlink()
    status, content = _call(server, "GET", f"/api/v1/matches/{match.pk}/replay/")
    assert status == 404 and b"missing" in content
