"""Bots' captured logs (stdout+stderr of a hosted bot, capped by the sandbox) in Django storage.

A log is written once under a fresh name and referenced from its row; it is shown
to the bot's owner and staff only (never in a replay or a public page).
"""

from __future__ import annotations

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
