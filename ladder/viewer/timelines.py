"""Timelines of replays for the viewer: read a replay, build its timeline once, cache it.

A timeline is a pure function of the replay's bytes (and of the engine that
re-simulates it), so it is cached under the replay's sha256 together with the
timeline format and the engine version, and stored gzip'd: about 25 KiB for a
4-seat game instead of about 600 KiB of JSON (see bench/viewer_bench.py). The
building itself is `engine.timeline`, which knows nothing of Django.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache

from engine.rules import ENGINE_VERSION
from engine.timeline import TIMELINE_FORMAT, ReplayDocumentError, Verification, build_timeline
from ladder.common.exceptions import ApplicationError, Conflict, NotFound
from ladder.common.jsonload import JSONTooDeep, load_json
from ladder.matches.replays import replay_open
from ladder.matches.selectors import NOT_FINISHED, ReplayFile, match_reveal_get

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 256 * 1024


def upload_max_bytes() -> int:
    """Largest replay file the standalone page may send (real games: a few KiB)."""
    return int(getattr(settings, "LADDER_VIEWER_UPLOAD_MAX_BYTES", 1024 * 1024))


def json_max_bytes() -> int:
    """Largest replay document, uncompressed (a zip bomb stops here)."""
    return int(getattr(settings, "LADDER_VIEWER_JSON_MAX_BYTES", 8 * 1024 * 1024))


def cache_seconds() -> int:
    return int(getattr(settings, "LADDER_VIEWER_CACHE_SECONDS", 7 * 24 * 3600))


class ViewerError(ApplicationError):
    """A replay the viewer cannot show; `status` is the HTTP status it maps to."""

    status = 400


class ReplayUnreadable(ViewerError):
    code = "invalid_replay"


class ReplayTooLarge(ViewerError):
    code = "too_large"
    status = 413


class StoredReplayUnreadable(ViewerError):
    """A stored match's replay that cannot be read: the server's data, not the caller's."""

    code = "replay_unreadable"
    status = 422


@dataclass(frozen=True)
class Timeline:
    """A built timeline: its JSON (gzip'd) and the verification verdict it carries."""

    sha256: str
    gzipped: bytes
    verification: Verification

    @property
    def ok(self) -> bool:
        return bool(self.verification.get("ok"))

    @property
    def etag(self) -> str:
        """Weak: the same timeline is sent gzip'd or not (If-None-Match compares weakly)."""
        return f'W/"{self.sha256}.{TIMELINE_FORMAT}.{ENGINE_VERSION}"'

    def json(self) -> bytes:
        return gzip.decompress(self.gzipped)


def replay_decode(data: bytes) -> dict[str, Any]:
    """A replay file's bytes (gzip'd or plain JSON) -> its document, bounded in size."""
    if not data:
        raise ReplayUnreadable("the replay file is empty")
    limit = json_max_bytes()
    raw = data
    if data[:2] == GZIP_MAGIC:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        parts: list[bytes] = []
        size = 0
        pending = data
        try:
            while pending and not d.eof:
                out = d.decompress(pending, CHUNK)
                size += len(out)
                if size > limit:
                    raise ReplayUnreadable(f"the replay unpacks to more than {limit} bytes")
                parts.append(out)
                pending = d.unconsumed_tail
        except zlib.error as exc:
            raise ReplayUnreadable(f"the replay is not valid gzip: {exc}") from None
        if not d.eof:
            raise ReplayUnreadable("the replay's gzip stream is truncated")
        raw = b"".join(parts)
    elif len(data) > limit:
        raise ReplayUnreadable(f"the replay is larger than {limit} bytes")
    try:
        doc = load_json(raw)
    except JSONTooDeep as exc:
        raise ReplayUnreadable(f"the replay is not a replay: {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReplayUnreadable(f"the replay is not gzip'd JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise ReplayUnreadable(f"a replay is a JSON object, not {type(doc).__name__}")
    return doc


def _cache_key(sha256: str) -> str:
    return f"viewer:timeline:{TIMELINE_FORMAT}:{ENGINE_VERSION}:{sha256}"


def cached_timeline(sha256: str) -> Timeline | None:
    found = cache.get(_cache_key(sha256))
    return found if isinstance(found, Timeline) else None


def timeline_of_bytes(data: bytes, *, sha256: str | None = None) -> Timeline:
    """The timeline of a replay file, built at most once per cache lifetime.

    ReplayUnreadable when the bytes are not a replay document at all; a replay
    that does not verify still gives a Timeline (`ok` false) that says why.
    """
    digest = sha256 or hashlib.sha256(data).hexdigest()
    found = cached_timeline(digest)
    if found is not None:
        return found
    doc = replay_decode(data)
    try:
        timeline = build_timeline(doc)
    except ReplayDocumentError as exc:
        raise ReplayUnreadable(str(exc)) from None
    timeline["sha256"] = digest
    body = json.dumps(timeline, separators=(",", ":"), ensure_ascii=False).encode()
    built = Timeline(
        digest, gzip.compress(body, compresslevel=6, mtime=0), timeline["verification"]
    )
    cache.set(_cache_key(digest), built, cache_seconds())
    return built


def finished_match(match_id: int) -> ReplayFile:
    """The stored replay of a match that may be shown (``match_reveal``): it exists and it
    is finished, and no other match still plays its deal."""
    reveal = match_reveal_get(match_id=match_id)
    if reveal.replay is not None:
        return reveal.replay
    if reveal.hidden == NOT_FINISHED:
        raise Conflict(f"match {match_id} is {reveal.status}; its replay is shown once it finished")
    if reveal.stored:
        raise Conflict(reveal.hidden)
    raise NotFound("this match has no replay")


def match_timeline(*, match_id: int) -> Timeline:
    """The timeline of a finished match's stored replay (cached by its recorded sha256)."""
    replay = finished_match(match_id)
    found = cached_timeline(replay.sha256)
    if found is not None:
        return found
    try:
        with replay_open(replay.name) as fh:
            data = fh.read(max(replay.size, 0) + 1)
    except OSError as exc:
        raise StoredReplayUnreadable(f"the stored replay cannot be read: {exc}") from None
    if hashlib.sha256(data).hexdigest() != replay.sha256:
        raise StoredReplayUnreadable("the stored replay file does not match its recorded sha256")
    try:
        return timeline_of_bytes(data, sha256=replay.sha256)
    except ReplayUnreadable as exc:
        raise StoredReplayUnreadable(f"the stored replay cannot be shown: {exc.message}") from None
