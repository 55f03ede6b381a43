"""Logging: everything to stderr, one format, with the request id; JSON for a log pipeline.

Explicit for production too: without it, DJANGO_DEBUG=0 sends a 500's traceback only
to (unconfigured) admin mail, i.e. nowhere.
"""

from __future__ import annotations

from typing import Any

from ladder.settings.environment import Environment

env = Environment("logs and metrics")

_level = env.text("LADDER_LOG_LEVEL", "INFO", why="log level of every process")
_format = env.text(
    "LADDER_LOG_FORMAT",
    "line",
    why="line (readable lines) or json (one JSON object per line with the request id, match "
    "id and worker, for a log pipeline)",
)
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {
        "request_id": {"()": "ladder.common.request_id.RequestIdFilter"},
        "client_error": {"()": "ladder.common.log_filters.ClientErrorWithoutTraceback"},
        "context": {"()": "telemetry.logs.ContextFilter"},  # match_id, worker
    },
    "formatters": {
        "line": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s]: %(message)s"},
        "json": {"()": "telemetry.logs.LineJsonFormatter"},
    },
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "filters": ["request_id", "context"],
            "formatter": "json" if _format.lower() == "json" else "line",
        }
    },
    # Management commands' --log-level sets this root level (digdown.serving).
    "root": {"handlers": ["stderr"], "level": _level},
    "loggers": {
        # Listed to drop Django's own handlers (console only when DEBUG, admin mail):
        # everything goes to stderr once. django.request: 5xx with traceback, 4xx.
        "django": {"level": "INFO"},
        "django.server": {"level": "INFO", "propagate": True},
        # A 403 (an admin page without the permission) is a warning, not a traceback.
        "django.request": {"level": "INFO", "filters": ["client_error"], "propagate": True},
    },
}
