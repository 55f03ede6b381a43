"""Replay bytes: checks and storage keys.

Replays are gzip-compressed JSON. They are stored under a content-addressed name
(``replays/<match>/<sha256>.json.gz``) *before* the recording transaction, so a
retry writes the same name and a crash leaves at most an orphan file, never a
finished match without its replay.
"""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass

from django.conf import settings
from django.core.files.base import ContentFile, File
from django.core.files.storage import default_storage

from ladder.common.exceptions import ApplicationError

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 1024 * 1024
MAX_UNPACKED = 512 * 1024 * 1024


@dataclass(frozen=True)
class StoredReplay:
    name: str
    sha256: str
    size: int


def replay_check(data: bytes) -> str:
    """Validate gzip framing and size; return the sha256 hex."""
    if not data:
        raise ApplicationError("replay is empty")
    if len(data) > settings.LADDER_REPLAY_MAX_BYTES:
        raise ApplicationError(
            f"replay is {len(data)} bytes; the limit is {settings.LADDER_REPLAY_MAX_BYTES}"
        )
    if not data.startswith(GZIP_MAGIC):
        raise ApplicationError("replay must be gzip-compressed JSON")
    # Read the whole stream in bounded steps so the CRC and length trailer are
    # verified (truncation) without ever holding more than one chunk unpacked.
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    unpacked = 0
    pending = data
    try:
        while pending and not d.eof:
            unpacked += len(d.decompress(pending, CHUNK))
            pending = d.unconsumed_tail
            if unpacked > MAX_UNPACKED:
                raise ApplicationError(f"replay unpacks to more than {MAX_UNPACKED} bytes")
        while not d.eof and unpacked <= MAX_UNPACKED:
            out = d.decompress(b"", CHUNK)
            if not out:
                break
            unpacked += len(out)
    except zlib.error as exc:
        raise ApplicationError(f"replay is not valid gzip: {exc}") from exc
    if not d.eof:
        raise ApplicationError("replay gzip stream is truncated")
    return hashlib.sha256(data).hexdigest()


def replay_name(match_id: int, sha256: str) -> str:
    return f"replays/{match_id}/{sha256}.json.gz"


def _stored_digest(name: str) -> str | None:
    """sha256 of a stored file, or None when it is missing."""
    try:
        with default_storage.open(name, "rb") as fh:
            h = hashlib.sha256()
            for chunk in iter(lambda: fh.read(CHUNK), b""):
                h.update(chunk)
            return h.hexdigest()
    except FileNotFoundError:
        return None


def replay_store(*, match_id: int, data: bytes) -> StoredReplay:
    """Check and store a replay; idempotent for identical bytes.

    A file already under the content-addressed name is reused only if its bytes
    hash to the same sha256 (a concurrent writer may still be half-way through);
    otherwise the storage picks a fresh name, so a match never points at a
    partial file. Losers of a race leave an orphan file, never a wrong one.
    """
    digest = replay_check(data)
    name = replay_name(match_id, digest)
    if _stored_digest(name) != digest:
        name = default_storage.save(name, ContentFile(data))
    return StoredReplay(name=name, sha256=digest, size=len(data))


def replay_open(name: str) -> File:
    """Open a stored replay for reading (binary)."""
    return default_storage.open(name, "rb")
