"""Hosted-bot uploads: crafted hostile archives are rejected with clear errors, nothing stored."""

from __future__ import annotations

import io
import stat
import zipfile
from typing import Any

import pytest
from django.core.files.storage import default_storage

from ladder.bots import uploads
from ladder.bots.models import BotVersion
from ladder.bots.services import UploadRejected, bot_create, bot_version_upload
from ladder.bots.uploads import validate_upload

pytestmark = pytest.mark.django_db

GOOD = b"def act(observation, legal):\n    return legal[0]\n"


def zip_of(members: list[tuple[Any, bytes]], *, method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buf.getvalue()


def symlink_zip() -> bytes:
    info = zipfile.ZipInfo("link")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return zip_of([("bot.py", GOOD), (info, b"/etc/passwd")])


def raw_name_zip(name: bytes) -> bytes:
    """A zip whose member is named ``name`` byte for byte, in the local header and the
    central directory alike (zipfile itself cuts a name at NUL when writing)."""
    placeholder = b"Q" * len(name)
    data = zip_of([("bot.py", GOOD), (placeholder.decode(), GOOD)])
    assert data.count(placeholder) == 2
    return data.replace(placeholder, name)


def big_zip() -> bytes:
    """9 MiB of zeros (about 9 KiB compressed): over the 8 MiB unpacked cap."""
    return zip_of([("bot.py", GOOD), ("big.txt", b"\0" * (9 * 1024 * 1024))])


ATTACKS = {
    "zip slip ..": (zip_of([("bot.py", GOOD), ("../../evil.py", GOOD)]), "unsafe path"),
    "absolute path": (zip_of([("bot.py", GOOD), ("/etc/cron.d/x", b"x")]), "unsafe path"),
    "windows drive": (zip_of([("bot.py", GOOD), ("C:\\x.py", GOOD)]), "unsafe path"),
    "symlink": (symlink_zip(), "not a regular file"),
    "zip bomb": (big_zip(), "zip bomb"),
    "nested zip by name": (zip_of([("bot.py", GOOD), ("inner.zip", b"x")]), "nested archives"),
    "nested zip by magic": (
        zip_of([("bot.py", GOOD), ("data.bin", zip_of([("a", b"a")]))]),
        "nested archives",
    ),
    "too many files": (zip_of([(f"f{i}.txt", b"") for i in range(201)]), "entries; the limit"),
    "missing entry point": (zip_of([("lib.py", GOOD)]), "missing entry point"),
    "bad encoding": (zip_of([("bot.py", b"x = '\xff\xfe'\n")]), "not UTF-8"),
    "syntax error": (zip_of([("bot.py", b"def (:\n")]), "syntax error"),
    "duplicate": (zip_of([("bot.py", GOOD), ("BOT.py", GOOD)]), "duplicate"),
    "not a zip": (b"PK\x03\x04garbage" * 10, "not a readable zip"),
    "tarball": (b"\x1f\x8b\x08\x00" + b"\0" * 100, "only a .py file or a .zip"),
    # zipfile reads this name as "ok.py"; the central directory says "ok.py\0../../evil.sh".
    "NUL in a member name": (raw_name_zip(b"ok.py\x00../../evil.sh"), "NUL in name"),
    "control character in a name": (raw_name_zip(b"\x1b[2Jx.py"), "control character"),
    # Compile bombs: compile() raises RecursionError/MemoryError or eats gigabytes.
    "200,000 terms": (b"x = " + b"1+" * 200_000 + b"1\n", "too deeply nested"),
    "500,000 unary minus": (b"x = " + b"-" * 500_000 + b"1\n", "too deeply nested"),
    "deep nesting in a zip": (
        zip_of([("bot.py", GOOD), ("lib/deep.py", b"x = " + b"a." * 300_000 + b"b\n")]),
        "lib/deep.py: too deeply nested",
    ),
}
PY_ATTACKS = {"200,000 terms", "500,000 unary minus"}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_attack_rejected_nothing_stored(name: str, make_user: Any) -> None:
    data, message = ATTACKS[name]
    owner = make_user("alice")
    bot = bot_create(owner=owner, name="victim", kind="hosted")
    filename = {"tarball": "bot.tar.gz", **dict.fromkeys(PY_ATTACKS, "bot.py")}.get(name, "bot.zip")
    with pytest.raises(UploadRejected) as exc:
        bot_version_upload(user=owner, bot_id=bot.pk, filename=filename, data=data)
    assert message in exc.value.message
    assert exc.value.extra["errors"]
    assert not BotVersion.objects.filter(bot=bot).exists()
    assert not default_storage.exists(f"bots/{bot.pk}")


def test_a_source_too_large_to_compile_hits_the_memory_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """200,000 `or`s take about 270 MB to compile: over a 128 MB limit, in the child only."""
    monkeypatch.setattr(uploads, "COMPILE_MEMORY_BYTES", 128 * 1024 * 1024)
    wide = b"x = " + b" or ".join([b"a"] * 200_000)
    report = validate_upload(filename="bot.zip", data=zip_of([("bot.py", GOOD), ("w.py", wide)]))
    assert report.errors == ["w.py: too deeply nested or too large to compile"]


def test_a_compiler_that_runs_out_of_time_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiling child has a deadline; what it was compiling gets the blame."""
    monkeypatch.setattr(uploads, "COMPILE_TIMEOUT_S", 0.001)
    report = validate_upload(filename="bot.py", data=GOOD)
    assert report.errors in (
        ["bot.py: took longer than 0 s to compile"],
        ["took longer than 0 s to compile"],  # killed before it named the file
    )


def test_zip_bomb_counts_decompressed_bytes_and_stops_early() -> None:
    # 64 MiB of zeros compresses to ~64 KiB; the counter stops at the 8 MiB cap.
    bomb = zip_of([("bot.py", GOOD), ("zeros", b"\0" * (64 * 1024 * 1024))])
    assert len(bomb) < 1024 * 1024
    report = validate_upload(filename="bomb.zip", data=bomb)
    assert not report.ok
    assert "zip bomb" in report.errors[0]
    assert 8 * 1024 * 1024 < report.unpacked_size <= 8 * 1024 * 1024 + 64 * 1024


def test_lying_header_is_rejected() -> None:
    """Declared sizes (local header and central directory) say 10 bytes; 9 MiB follow."""
    data = bytearray(zip_of([("bot.py", GOOD), ("big", b"\0" * (9 * 1024 * 1024))]))
    eocd = data.rfind(b"PK\x05\x06")
    p = int.from_bytes(data[eocd + 16 : eocd + 20], "little")
    while data[p : p + 4] == b"PK\x01\x02":
        n, m, k = (int.from_bytes(data[p + o : p + o + 2], "little") for o in (28, 30, 32))
        if bytes(data[p + 46 : p + 46 + n]) == b"big":
            data[p + 24 : p + 28] = (10).to_bytes(4, "little")
            local = int.from_bytes(data[p + 42 : p + 46], "little")
            data[local + 22 : local + 26] = (10).to_bytes(4, "little")
        p += 46 + n + m + k
    report = validate_upload(filename="liar.zip", data=bytes(data))
    assert not report.ok
    assert "big: cannot be decompressed" in report.errors[0]
    assert report.unpacked_size < 1024 * 1024


def test_oversized_upload(make_user: Any) -> None:
    owner = make_user("alice")
    bot = bot_create(owner=owner, name="big-one", kind="hosted")
    with pytest.raises(UploadRejected, match="the limit is 1048576"):
        bot_version_upload(
            user=owner, bot_id=bot.pk, filename="bot.py", data=b"#" * (1024 * 1024 + 1)
        )


def test_valid_zip_with_named_entry_point(make_user: Any) -> None:
    owner = make_user("alice")
    bot = bot_create(owner=owner, name="zipped", kind="hosted")
    data = zip_of([("pkg/__init__.py", b""), ("pkg/run.py", GOOD), ("README.txt", b"hi")])
    version = bot_version_upload(
        user=owner, bot_id=bot.pk, filename="bot.zip", data=data, entry_point="pkg/run.py"
    )
    assert version.entry_point == "pkg/run.py"
    assert "ok: entry point pkg/run.py" in version.validation_log
    with default_storage.open(version.archive.name, "rb") as fh:
        assert fh.read() == data


def test_remote_bot_takes_no_upload(make_user: Any) -> None:
    owner = make_user("alice")
    bot = bot_create(owner=owner, name="remote-one", kind="remote")
    with pytest.raises(Exception, match="only hosted bots"):
        bot_version_upload(user=owner, bot_id=bot.pk, filename="bot.py", data=GOOD)


def test_compile_bomb_over_rest_is_a_400_with_the_reason(
    api: Any, make_user: Any, token_for: Any
) -> None:
    owner = make_user("alice")
    bot = bot_create(owner=owner, name="bomber", kind="hosted")
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token_for(owner)}")
    upload = io.BytesIO(b"x = " + b"1+" * 200_000 + b"1\n")
    upload.name = "bot.py"
    r = api.post(f"/api/v1/bots/{bot.pk}/versions/", {"file": upload}, format="multipart")
    assert r.status_code == 400, r.content[:300]
    assert r.json()["error"] == "upload_rejected"
    assert r.json()["errors"] == ["bot.py: too deeply nested or too large to compile"]
    assert not BotVersion.objects.filter(bot=bot).exists()
