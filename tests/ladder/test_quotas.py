"""Per-user quotas over REST and the web forms (gRPC: tests/ladder/grpc/test_quotas.py).

Each was unlimited: one user created 880 bots and stored 131 MiB in one bot. Now
every limit refuses with its setting named (REST 403, 429 for the daily one;
the web form shows the message), staff are exempt, and a bot past its stored
versions has its oldest unneeded ones pruned, their records kept.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from ladder.bots.models import Bot, BotVersion
from ladder.bots.services import bot_create, bot_version_smoke_record, bot_version_upload
from ladder.matches.claims import match_cancel, match_start
from ladder.matches.creation import match_create
from ladder.matches.models import Match

pytestmark = pytest.mark.django_db

SOURCE = b"def act(obs):\n    return 0\n"


@pytest.fixture
def quotas(settings: Any) -> Any:
    settings.LADDER_QUOTA_BOTS_PER_USER = 2
    settings.LADDER_QUOTA_VERSIONS_PER_BOT = 3
    settings.LADDER_QUOTA_BYTES_PER_USER = 4096
    settings.LADDER_QUOTA_OPEN_CHALLENGES = 2
    settings.LADDER_QUOTA_CHALLENGES_PER_DAY = 3
    return settings


def client_for(user: Any, token_for: Any) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(user)}")
    return client


def upload(client: APIClient, bot: Bot, data: bytes = SOURCE, name: str = "bot.py") -> Any:
    f = SimpleUploadedFile(name, data, content_type="text/x-python")
    return client.post(f"/api/v1/bots/{bot.pk}/versions/", {"file": f}, format="multipart")


def valid(version: Any, bot: Bot | None = None) -> None:
    """Record a passed smoke match: ``version`` is a BotVersion, or an upload's answer."""
    if bot is not None:
        version = BotVersion.objects.get(bot=bot, number=version.json()["number"])
    bot_version_smoke_record(version_id=version.pk, passed=True, outcome="passed", log=b"")


def test_bots_per_user(quotas: Any, make_user: Any, token_for: Any) -> None:
    user = make_user("many")
    api = client_for(user, token_for)
    for name in ("bot-one", "bot-two"):
        assert api.post("/api/v1/bots/", {"name": name, "kind": "hosted"}).status_code == 201
    r = api.post("/api/v1/bots/", {"name": "bot-three", "kind": "hosted"})
    assert r.status_code == 403, r.content
    body = r.json()
    assert body["error"] == "quota_exceeded" and body["limit"] == "LADDER_QUOTA_BOTS_PER_USER"
    assert "at most 2" in body["detail"] and body["allowed"] == 2
    assert Bot.objects.filter(owner=user).count() == 2
    staff = client_for(make_user("boss", staff=True), token_for)
    for name in ("staff-one", "staff-two", "staff-three"):
        assert staff.post("/api/v1/bots/", {"name": name, "kind": "hosted"}).status_code == 201


def test_stored_versions_are_pruned_and_their_records_kept(
    quotas: Any,
    make_user: Any,
    make_bot: Any,
    token_for: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    user = make_user("uploader")
    bot = bot_create(owner=user, name="pruned", kind="hosted")
    api = client_for(user, token_for)
    for i in range(3):
        r = upload(api, bot, SOURCE + f"# {i}\n".encode())
        assert r.status_code == 201, r.content
        valid(r, bot)
    v1 = BotVersion.objects.get(bot=bot, number=1)
    opponent = make_bot(make_user("other"), "opponent")
    played = match_create(bot_ids=[bot.pk, opponent.pk], versions={bot.pk: v1.pk})
    match_start(match_id=played.pk, worker="w")  # v1 is pinned by an open match
    archive_of_v2 = BotVersion.objects.get(bot=bot, number=2).archive.name
    with django_capture_on_commit_callbacks(execute=True):
        r = upload(api, bot, SOURCE + b"# 3\n")
    assert r.status_code == 201, r.content
    # v1 is in an open match and v3 is current: v2 is the one pruned.
    v2 = BotVersion.objects.get(bot=bot, number=2)
    assert v2.archive.name == "" and v2.status == BotVersion.Status.INVALID
    assert "pruned" in v2.smoke_outcome and v2.archive_sha256  # its record stays
    assert "v2" in BotVersion.objects.get(bot=bot, number=4).validation_log  # owner told
    assert BotVersion.objects.get(bot=bot, number=1).archive.name  # pinned: kept
    assert not default_storage.exists(archive_of_v2)
    valid(r, bot)
    # v1 pinned, v4 current, v3 the only one left to prune; then nothing can be.
    assert upload(api, bot, SOURCE + b"# 4\n").status_code == 201
    assert BotVersion.objects.get(bot=bot, number=3).archive.name == ""
    r = upload(api, bot, SOURCE + b"# 5\n")  # v1 pinned, v4 valid, v5 pending: nothing
    assert r.status_code == 403, r.content
    assert r.json()["limit"] == "LADDER_QUOTA_VERSIONS_PER_BOT"


def test_stored_bytes_per_user(quotas: Any, make_user: Any, token_for: Any) -> None:
    user = make_user("bytes")
    bot = bot_create(owner=user, name="heavy", kind="hosted")
    api = client_for(user, token_for)
    big = SOURCE + b"#" * 3000 + b"\n"
    assert upload(api, bot, big).status_code == 201
    r = upload(api, bot, big + b"# again\n")
    assert r.status_code == 403, r.content
    assert r.json()["limit"] == "LADDER_QUOTA_BYTES_PER_USER"
    assert BotVersion.objects.filter(bot=bot).count() == 1  # nothing stored


def test_open_challenges_and_challenges_per_day(
    quotas: Any, make_user: Any, make_bot: Any, token_for: Any
) -> None:
    user = make_user("challenger")
    mine = make_bot(user, "mine")
    theirs = make_bot(make_user("rival"), "theirs")
    api = client_for(user, token_for)

    def challenge() -> Any:
        return api.post("/api/v1/matches/", {"bots": [mine.pk, theirs.pk]}, format="json")

    assert challenge().status_code == 201 and challenge().status_code == 201
    r = challenge()
    assert r.status_code == 403 and r.json()["limit"] == "LADDER_QUOTA_OPEN_CHALLENGES", r.content
    boss = make_user("staffer", staff=True)
    for match in Match.objects.filter(requested_by=user):
        match_cancel(match_id=match.pk, user=boss)  # no longer open, still of today
    assert challenge().status_code == 201  # the third of the day
    r = challenge()
    assert r.status_code == 429 and r.json()["limit"] == "LADDER_QUOTA_CHALLENGES_PER_DAY", (
        r.content
    )
    assert "last 24 hours" in r.json()["detail"]
    # The matchmaker and staff are not counted against.
    assert match_create(bot_ids=[mine.pk, theirs.pk])
    for _ in range(4):
        assert match_create(bot_ids=[mine.pk, theirs.pk], requested_by=boss)


def test_the_web_forms_show_the_quota(quotas: Any, make_user: Any, make_bot: Any) -> None:
    user = make_user("webby")
    for name in ("web-one", "web-two"):
        bot_create(owner=user, name=name, kind="hosted")
    web = Client()
    web.force_login(user)
    r = web.post("/me/bots/new/", {"name": "web-three", "kind": "hosted", "description": ""})
    assert r.status_code == 400
    assert b"quota exceeded: bots per user" in r.content
    assert b"LADDER_QUOTA_BOTS_PER_USER" in r.content
    bot = Bot.objects.get(name="web-one")
    first = bot_version_upload(
        user=user, bot_id=bot.pk, filename="bot.py", data=SOURCE + b"#" * 3000 + b"\n"
    )
    valid(first)
    f = SimpleUploadedFile("bot.py", SOURCE + b"#" * 2000 + b"\n")
    r = web.post(f"/me/bots/{bot.pk}/upload/", {"file": f})
    assert r.status_code == 400 and b"LADDER_QUOTA_BYTES_PER_USER" in r.content
    theirs = make_bot(make_user("webrival"), "webrival")
    for _ in range(2):
        match_create(bot_ids=[bot.pk, theirs.pk], requested_by=user)
    r = web.post(f"/me/bots/{bot.pk}/challenge/", {"opponents": "webrival"})
    assert r.status_code == 400 and b"LADDER_QUOTA_OPEN_CHALLENGES" in r.content


def test_comparisons_open_and_per_day(
    quotas: Any, make_user: Any, make_bot: Any, token_for: Any
) -> None:
    quotas.LADDER_COMPARISONS_OPEN_PER_USER = 1
    quotas.LADDER_QUOTA_COMPARISONS_PER_DAY = 2
    user = make_user("comparer")
    mine = make_bot(user, "compared")
    second = bot_version_upload(user=user, bot_id=mine.pk, filename="bot.py", data=SOURCE + b"#\n")
    valid(second)
    rival = make_bot(make_user("comp-rival"), "comp-rival")
    api = client_for(user, token_for)
    body = {"bot": mine.pk, "old_version": 1, "new_version": 2, "opponents": [rival.pk], "deals": 2}
    assert api.post("/api/v1/comparisons/", body, format="json").status_code == 201
    r = api.post("/api/v1/comparisons/", body, format="json")
    assert r.status_code == 403 and r.json()["limit"] == "LADDER_COMPARISONS_OPEN_PER_USER", (
        r.content
    )
    boss = make_user("comp-staff", staff=True)
    for match in Match.objects.filter(deal__comparison__requested_by=user):
        match_cancel(match_id=match.pk, user=boss)
    assert api.post("/api/v1/comparisons/", body, format="json").status_code == 201
    for match in Match.objects.filter(deal__comparison__requested_by=user, status="queued"):
        match_cancel(match_id=match.pk, user=boss)
    r = api.post("/api/v1/comparisons/", body, format="json")
    assert r.status_code == 429 and r.json()["limit"] == "LADDER_QUOTA_COMPARISONS_PER_DAY", (
        r.content
    )
