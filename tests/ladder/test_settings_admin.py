"""Settings from the environment, and the admin's moderation pages and actions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from ladder.bots.models import Bot
from ladder.matches.creation import match_create
from ladder.matches.models import Match

ROOT = Path(__file__).resolve().parents[2]


def settings_with(env: dict[str, str]) -> dict[str, Any]:
    code = (
        "import json, django; django.setup(); from django.conf import settings as s;"
        "print(json.dumps({'db': s.DATABASES['default'], 'storage': s.STORAGES['default'],"
        " 'k': s.LADDER_ELO_K, 'ladders': s.LADDER_LADDERS, 'default': s.LADDER_DEFAULT_LADDER,"
        " 'cache': s.CACHES['default'], 'debug': s.DEBUG}, default=str))"
    )
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DATABASE_URL", "LADDER_", "DJANGO_"))
    }
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**clean, "DJANGO_SETTINGS_MODULE": "ladder.settings", **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout)


def test_sqlite_default_is_wal_immediate_with_busy_timeout(tmp_path: Path) -> None:
    s = settings_with({"LADDER_VAR_DIR": str(tmp_path)})
    db = s["db"]
    assert db["ENGINE"] == "django.db.backends.sqlite3"
    assert db["NAME"] == str(tmp_path / "ladder.sqlite3")
    assert db["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert db["OPTIONS"]["timeout"] >= 5
    assert "journal_mode=WAL" in db["OPTIONS"]["init_command"]
    assert s["storage"]["BACKEND"] == "django.core.files.storage.FileSystemStorage"


def test_postgres_and_s3_from_environment(tmp_path: Path) -> None:
    s = settings_with(
        {
            "DATABASE_URL": "postgres://u:p@db.internal:5433/ladder",
            "LADDER_STORAGE": "s3",
            "LADDER_ELO_K": "24",
            "LADDER_VAR_DIR": str(tmp_path),
        }
    )
    assert s["db"]["ENGINE"] == "django.db.backends.postgresql"
    assert (s["db"]["HOST"], s["db"]["PORT"], s["db"]["NAME"]) == ("db.internal", 5433, "ladder")
    assert "transaction_mode" not in s["db"].get("OPTIONS", {})
    assert s["storage"]["BACKEND"] == "storages.backends.s3.S3Storage"
    assert s["k"] == 24.0


def test_s3_backend_is_installed_and_configurable() -> None:
    """The s3 extra is part of the project install, so the switch is real, not only documented."""
    from storages.backends.s3 import S3Storage

    store = S3Storage(
        bucket_name="replays",
        endpoint_url="http://127.0.0.1:9000",
        access_key="test",
        secret_key="test",
        region_name="us-east-1",
    )
    assert store.bucket_name == "replays"
    assert store.url("r/abc.json.gz").startswith("http://127.0.0.1:9000/replays/r/abc.json.gz")


def test_live_database_settings(db: Any) -> None:
    """SQLite really runs in WAL mode; PostgreSQL is a version with row locks we rely on."""
    from django.db import connection

    with connection.cursor() as cur:
        if connection.vendor == "sqlite":
            cur.execute("PRAGMA journal_mode")
            assert cur.fetchone()[0].lower() == "wal"
        else:
            assert connection.vendor == "postgresql"
            assert connection.pg_version >= 120000


@pytest.mark.django_db
def test_admin_pages_and_moderation_actions(make_user: Any, make_bot: Any) -> None:
    staff = make_user("root", staff=True)
    staff.is_superuser = True
    staff.save()
    alice = make_user("alice")
    b1, b2 = make_bot(alice, "adm-1"), make_bot(alice, "adm-2")
    match = match_create(bot_ids=[b1.pk, b2.pk], requested_by=alice)
    client = Client()
    client.force_login(staff)
    for url in [
        "/admin/accounts/user/",
        "/admin/accounts/apitoken/",
        "/admin/bots/bot/?q=adm&kind__exact=hosted",
        "/admin/bots/botversion/",
        "/admin/matches/match/?status__exact=queued&q=adm-1",
        "/admin/matches/matchseat/",
        "/admin/matches/matchresult/",
        "/admin/tournaments/tournament/",
        f"/admin/bots/bot/{b1.pk}/change/",
        f"/admin/matches/match/{match.pk}/change/",
    ]:
        assert client.get(url).status_code == 200, url
    r = client.post(
        "/admin/bots/bot/", {"action": "suspend", "_selected_action": [b1.pk]}, follow=True
    )
    assert r.status_code == 200
    bot = Bot.objects.get(pk=b1.pk)
    assert not bot.is_active and "root" in bot.suspended_reason
    client.post("/admin/matches/match/", {"action": "cancel", "_selected_action": [match.pk]})
    assert Match.objects.get(pk=match.pk).status == Match.Status.CANCELLED


def test_ladders_and_shared_cache_from_environment(tmp_path: Path) -> None:
    plain = settings_with({"LADDER_VAR_DIR": str(tmp_path)})
    # The product's game is dd-2 (rules §11); a dd-1 ladder stays available.
    assert plain["ladders"] == {
        "dd-2": {"ruleset": "dd-2", "difficulty": "normal", "seats": [2, 4]},
        "dd-1": {"ruleset": "dd-1", "difficulty": "normal", "seats": [2, 4]},
    }
    assert plain["default"] == "dd-2"
    assert plain["cache"]["BACKEND"].endswith("LocMemCache")
    s = settings_with(
        {
            "LADDER_VAR_DIR": str(tmp_path),
            "LADDER_LADDERS": "dd-1=dd-1/normal/2-4, dd-2=dd-2/normal/2-4",
            "LADDER_DEFAULT_LADDER": "dd-2",
            "LADDER_CACHE_URL": "redis://cache.internal:6379/1",
        }
    )
    assert set(s["ladders"]) == {"dd-1", "dd-2"} and s["default"] == "dd-2"
    assert s["ladders"]["dd-2"] == {"ruleset": "dd-2", "difficulty": "normal", "seats": [2, 4]}
    # Django's Redis cache, failing open while Redis is away (ladder/common/cache.py).
    assert s["cache"]["BACKEND"] == "ladder.common.cache.DegradingRedisCache"
    assert s["cache"]["LOCATION"] == "redis://cache.internal:6379/1"
    with pytest.raises(subprocess.CalledProcessError) as exc:
        settings_with({"LADDER_VAR_DIR": str(tmp_path), "LADDER_LADDERS": "dd-1:normal"})
    assert "is not KEY=RULESET/DIFFICULTY/MIN-MAX" in exc.value.stderr


def test_production_needs_a_secret_key(tmp_path: Path) -> None:
    with pytest.raises(subprocess.CalledProcessError) as exc:
        settings_with({"DJANGO_DEBUG": "0", "LADDER_VAR_DIR": str(tmp_path)})
    assert "DJANGO_SECRET_KEY must be set" in exc.value.stderr
    s = settings_with(
        {"DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": "k" * 50, "LADDER_VAR_DIR": str(tmp_path)}
    )
    assert s["db"]["ENGINE"].endswith("sqlite3")
