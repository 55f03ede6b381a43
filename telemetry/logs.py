"""Structured logs: with ``LADDER_LOG_FORMAT=json`` every line is one JSON object.

A log pipeline (Loki, Elasticsearch, ``jq``) then finds every line of one
match or one request by a field instead of a pattern: ``match_id`` and
``worker`` are bound around a delivery of the play-match task, ``request_id``
around a web request or gRPC call (``ladder.common.request_id`` adds it). The
readable one-line format stays the default (``make run``, a terminal).
The JSON itself is python-json-logger's.
"""

from __future__ import annotations

import contextvars
import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pythonjsonlogger.json import JsonFormatter

FORMAT_ENV = "LADDER_LOG_FORMAT"
_fields: contextvars.ContextVar[dict[str, Any] | None] = contextvars.ContextVar(
    "log_fields", default=None
)


def json_wanted() -> bool:
    return os.environ.get(FORMAT_ENV, "").strip().lower() == "json"


@contextmanager
def bound(**fields: Any) -> Iterator[None]:
    """Every log record made inside the block carries ``fields`` (e.g. ``match_id``)."""
    token = _fields.set({**(_fields.get() or {}), **fields})
    try:
        yield
    finally:
        _fields.reset(token)


class ContextFilter(logging.Filter):
    """Copies the bound fields onto each record (the JSON formatter writes them out)."""

    def filter(self, record: logging.LogRecord) -> bool:
        for key, value in (_fields.get() or {}).items():
            if not hasattr(record, key):
                setattr(record, key, value)
        return True


class LineJsonFormatter(JsonFormatter):
    """time, level, logger, message, then whatever the record carries (request_id, match_id,
    worker, and ``extra=`` fields)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        renames = {"asctime": "time", "levelname": "level", "name": "logger"}
        kwargs.setdefault("rename_fields", renames)
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s", *args, **kwargs)


def use_json_on_root() -> None:
    """Put the JSON format and the context filter on the root logger's handlers, for the
    processes whose logging is not Django's ``LOGGING`` (the engine, a Celery worker)."""
    for handler in logging.getLogger().handlers:
        handler.setFormatter(LineJsonFormatter())
        if not any(isinstance(f, ContextFilter) for f in handler.filters):
            handler.addFilter(ContextFilter())
