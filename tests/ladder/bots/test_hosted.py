"""Hosted bots on the ladder, for real: uploads, smoke matches and matches in the sandbox.

The house bots (random, heuristic, starter) are uploaded as their owners would
upload them (``examples.hosted_bundle``), pass their smoke match in the sandbox,
play a full match through the workers' play-match code (``play_queued_match``,
in this process) on the real engine, and their logs are
shown to their owner and staff only, never in the replay. Runs on SQLite and,
in ``make test``, again on PostgreSQL.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from examples.hosted_bundle import build
from ladder import settings as ladder_settings
from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_create, bot_version_upload
from ladder.common.exceptions import Conflict
from ladder.matches.creation import match_create
from ladder.matches.models import Match
from tests.support.processes import Proc, start_engine
from tests.support.sandbox import require_sandbox
from workers.queued_match import play_queued_match
from workers.runner import EnginePool
from workers.seats import HOSTED_SHOWN
from workers.smoke import play_smoke_match

pytestmark = pytest.mark.django_db
HOUSE = ("random", "heuristic", "starter")


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proc]:
    require_sandbox()
    p = start_engine(tmp_path_factory.mktemp("hosted-engine"))
    yield p
    p.stop()


def upload(owner: Any, bot: Bot, filename: str, data: bytes) -> BotVersion:
    return bot_version_upload(user=owner, bot_id=bot.pk, filename=filename, data=data)


def smoked(owner: Any, bot: Bot, house: str, engine: Proc) -> BotVersion:
    """A house bot uploaded as ``bot``'s next version, through its smoke match."""
    version = upload(owner, bot, *build(house))
    return play_smoke_match(version_id=version.pk, engine_address=engine.address)


def client(user: Any = None, token_for: Callable[[Any], str] | None = None) -> APIClient:
    api = APIClient()
    if user is not None and token_for is not None:
        api.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(user)}")
    return api


def test_house_bots_uploaded_as_hosted_bots_play_a_full_match(
    engine: Proc, make_user: Callable[..., Any], token_for: Callable[[Any], str]
) -> None:
    alice, bob, root = make_user("alice"), make_user("bob"), make_user("root", staff=True)
    bots = {n: bot_create(owner=alice, name=f"house-{n}", kind="hosted") for n in HOUSE}
    versions = {n: upload(alice, bots[n], *build(n)) for n in HOUSE}
    assert {v.status for v in versions.values()} == {BotVersion.Status.PENDING}
    with pytest.raises(Conflict, match="no valid version yet"):
        match_create(bot_ids=[b.pk for b in bots.values()])

    for name, version in versions.items():
        checked = play_smoke_match(version_id=version.pk, engine_address=engine.address)
        assert checked.status == BotVersion.Status.VALID, (name, checked.smoke_outcome)
        assert checked.smoke_outcome.startswith("passed: rank ")

    match = match_create(bot_ids=[b.pk for b in bots.values()], seed=5)
    report = play_queued_match(match.pk, worker="test", engines=EnginePool(engine.address))
    match.refresh_from_db()
    assert report.recorded and match.status == Match.Status.FINISHED, report.line()
    assert len(report.ranks) == 3 and report.decisions > 20
    seats = list(match.seats.order_by("seat"))
    assert all(s.faults == 0 and not s.forfeit_reason for s in seats)
    assert all(s.log.name and s.log_size > 0 for s in seats)

    owner, other, staff, anonymous = (
        client(alice, token_for),
        client(bob, token_for),
        client(root, token_for),
        client(),
    )
    url = f"/api/v1/matches/{match.pk}/seats/1/log/"
    shown = owner.get(url)
    assert shown.status_code == 200 and shown["Content-Type"] == "text/plain; charset=utf-8"
    assert shown["X-Content-Type-Options"] == "nosniff" and "no-store" in shown["Cache-Control"]
    assert b"[sandbox] serving after" in shown.content
    assert b"bot heuristic 1 listening on unix:/run/bot/bot.sock" in shown.content
    assert staff.get(url).content == shown.content
    assert other.get(url).status_code == 403
    assert anonymous.get(url).status_code in (401, 403)
    assert owner.get(f"/api/v1/matches/{match.pk}/seats/7/log/").status_code == 404

    # The public views of the match carry none of it.
    replay = gzip.decompress(anonymous.get(f"/api/v1/matches/{match.pk}/replay/").getvalue())
    detail = anonymous.get(f"/api/v1/matches/{match.pk}/").content
    for public in (replay, detail):
        assert b"[sandbox]" not in public and b"listening on unix" not in public
    # Nor the sandboxes' socket paths on the worker's host (docs/security.md).
    doc = json.loads(replay)
    assert {s["address"] for s in doc["seats"]} == {HOSTED_SHOWN}
    assert b"unix:" not in replay and b".sock" not in replay

    smoke = owner.get(f"/api/v1/bots/{bots['starter'].pk}/versions/1/smoke/")
    assert smoke.status_code == 200
    body = smoke.json()
    assert body["status"] == "valid" and body["outcome"].startswith("passed")
    assert "[sandbox] serving after" in body["log"]
    assert other.get(f"/api/v1/bots/{bots['starter'].pk}/versions/1/smoke/").status_code == 403


def test_a_version_that_fails_its_smoke_match_never_plays(
    engine: Proc, make_user: Callable[..., Any], token_for: Callable[[Any], str]
) -> None:
    alice = make_user("alice")
    mine = bot_create(owner=alice, name="mine", kind="hosted")
    good = upload(alice, mine, *build("starter"))
    crashing = b'raise RuntimeError("this version crashes at start")\n'
    bad = upload(alice, mine, "bot.py", crashing)
    good = play_smoke_match(version_id=good.pk, engine_address=engine.address)
    bad = play_smoke_match(version_id=bad.pk, engine_address=engine.address)
    assert good.status == BotVersion.Status.VALID
    assert bad.status == BotVersion.Status.INVALID
    assert bad.smoke_outcome == "failed: not started: the bot exited with status 1"
    body = client(alice, token_for).get(f"/api/v1/bots/{mine.pk}/versions/2/smoke/").json()
    assert body["status"] == "invalid"
    assert "RuntimeError: this version crashes at start" in body["log"]

    # The ladder seats the newest *valid* version: v1, never the invalid v2.
    house = bot_create(owner=alice, name="house-random", kind="hosted")
    smoked(alice, house, "random", engine)
    match = match_create(bot_ids=[mine.pk, house.pk], seed=3)
    assert match.seats.get(bot=mine).version_id == good.pk
    versions = client(alice, token_for).get(f"/api/v1/bots/{mine.pk}/versions/").json()["results"]
    assert [(v["number"], v["status"]) for v in versions] == [(2, "invalid"), (1, "valid")]


def test_a_bot_with_only_an_invalid_version_cannot_be_matched(
    engine: Proc, make_user: Callable[..., Any]
) -> None:
    alice = make_user("alice")
    only = bot_create(owner=alice, name="only-bad", kind="hosted")
    other = bot_create(owner=alice, name="other", kind="hosted")
    bad = upload(alice, only, "bot.py", b"import this_module_does_not_exist\n")
    assert play_smoke_match(version_id=bad.pk, engine_address=engine.address).status == "invalid"
    smoked(alice, other, "starter", engine)
    with pytest.raises(Conflict, match="only-bad has no valid version yet"):
        match_create(bot_ids=[other.pk, only.pk])


PROBE = """
import os, sys
for path in {paths!r}:
    try:
        with open(path, "rb") as fh:
            fh.read(16)
        print("READ", path, file=sys.stderr)
    except OSError as exc:
        print("DENIED", path, type(exc).__name__, file=sys.stderr)
print("ENV", sorted(os.environ), file=sys.stderr)
from digdown.bot import parse_args, serve
serve(lambda observation, legal: 0, listen=parse_args(None, "probe").listen, name="probe")
"""


def test_an_uploaded_bot_cannot_read_the_database_media_or_settings(
    engine: Proc, make_user: Callable[..., Any], settings: Any, token_for: Callable[[Any], str]
) -> None:
    alice, eve = make_user("alice"), make_user("eve")
    victim = bot_create(owner=alice, name="victim", kind="hosted")
    stored = smoked(alice, victim, "heuristic", engine).archive.path
    database = str(settings.DATABASES["default"]["NAME"])
    paths = [
        stored,  # another bot's upload in media storage
        database if database.startswith("/") else "/var/run/postgresql/.s.PGSQL.5432",
        str(Path(ladder_settings.__file__)),
        str(Path(settings.BASE_DIR) / "var" / "ladder.sqlite3"),
        "/etc/passwd",
    ]
    spy = bot_create(owner=eve, name="spy", kind="hosted")
    source = PROBE.format(paths=paths).encode()
    version = play_smoke_match(
        version_id=upload(eve, spy, "spy.py", source).pk, engine_address=engine.address
    )
    assert version.status == BotVersion.Status.VALID, version.smoke_outcome
    log = client(eve, token_for).get(f"/api/v1/bots/{spy.pk}/versions/1/smoke/").json()["log"]
    assert log.count("DENIED") == len(paths) and "READ" not in log, log
    assert "DJANGO" not in log and "DATABASE_URL" not in log and "SECRET" not in log
