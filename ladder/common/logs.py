"""Bots' captured logs (stdout+stderr of a hosted bot, capped by the sandbox) in Django storage.

A log is written once under a fresh name and referenced from its row; it is shown
to the bot's owner and staff only (never in a replay or a public page).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.http import HttpResponse


def log_store(*, name: str, data: bytes) -> str:
    """Save ``data`` under ``name`` (made unique by the storage); returns the stored name."""
    return default_storage.save(name, ContentFile(data))


def log_read(name: str) -> bytes:
    """The stored log ``name`` (FileNotFoundError when it is gone)."""
    with default_storage.open(name, "rb") as fh:
        return fh.read()


# Control characters but the line break and the tab, and the invisible ones that reorder
# or hide text (bidi overrides, zero-width marks): what a page must not pass on.
_UNSHOWABLE = re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]"
)


@dataclass(frozen=True)
class LogExcerpt:
    """The end of a stored log as text a page can show (it still escapes it as HTML)."""

    text: str
    size: int
    left_out: int
    """Bytes before the shown part (0: the whole log is shown)."""
    missing: bool = False


def log_excerpt(name: str, *, cap: int) -> LogExcerpt:
    """The last ``cap`` bytes of the stored log ``name``, decoded and stripped of control
    characters. The end is what explains a crash or a forfeit; the whole log stays
    available as inert text (``log_response``)."""
    try:
        data = log_read(name)
    except (FileNotFoundError, OSError):
        return LogExcerpt(text="", size=0, left_out=0, missing=True)
    tail = data[-cap:] if cap > 0 else b""
    text = _UNSHOWABLE.sub("", tail.decode("utf-8", errors="replace"))
    return LogExcerpt(text=text, size=len(data), left_out=len(data) - len(tail))


def log_delete_later(name: str) -> None:
    """Delete a replaced log once the transaction that replaced it has committed."""
    from django.db import transaction

    if name:
        transaction.on_commit(lambda: default_storage.delete(name))


def log_response(data: bytes) -> HttpResponse:
    """A log as inert text: what a bot wrote is never rendered, sniffed or cached by others."""
    response = HttpResponse(data, content_type="text/plain; charset=utf-8")
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "default-src 'none'; sandbox"
    response["Cache-Control"] = "private, no-store"
    return response
