"""Telling authors by e-mail and signed webhooks (docs/notifications.md)."""

from __future__ import annotations

from ladder.settings.environment import Environment

env = Environment("notifications")

LADDER_SITE_URL = env.text(
    "LADDER_SITE_URL",
    "http://127.0.0.1:8000",
    why="the site's public address: e-mails and webhooks, read outside the site, link to it",
)
# Django's e-mail framework. Without EMAIL_HOST (development) e-mails are written to the
# worker's output instead of sent; EMAIL_BACKEND overrides either choice.
EMAIL_HOST = env.text("EMAIL_HOST", "", why="the SMTP server (unset: e-mails go to the log)")
EMAIL_PORT = env.integer("EMAIL_PORT", 25, why="its port")
EMAIL_HOST_USER = env.text("EMAIL_HOST_USER", "", why="the SMTP user")
EMAIL_HOST_PASSWORD = env.text("EMAIL_HOST_PASSWORD", "", why="its password")
EMAIL_USE_TLS = env.flag("EMAIL_USE_TLS", False, why="STARTTLS to the SMTP server")
EMAIL_USE_SSL = env.flag("EMAIL_USE_SSL", False, why="implicit TLS to the SMTP server")
EMAIL_TIMEOUT = env.number("EMAIL_TIMEOUT", 10, unit="s", why="one SMTP exchange's deadline")
EMAIL_BACKEND = env.text(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend",
    shown="(SMTP with EMAIL_HOST, else the console)",
    why="Django's e-mail backend, to override the choice",
)
DEFAULT_FROM_EMAIL = env.text(
    "DEFAULT_FROM_EMAIL", "Digging Down Ladder <ladder@localhost>", why="the sender of e-mails"
)
SERVER_EMAIL = env.text(
    "SERVER_EMAIL", DEFAULT_FROM_EMAIL, shown="DEFAULT_FROM_EMAIL", why="the sender of errors"
)
LADDER_TASK_NOTIFY = "workers.notify"
LADDER_TASK_NOTIFY_SWEEP = "workers.notify_sweep"
LADDER_NOTIFY_TIMEOUT_S = env.number(
    "LADDER_NOTIFY_TIMEOUT_S", 10, unit="s", why="one attempt's deadline (SMTP or a webhook)"
)
LADDER_NOTIFY_MAX_ATTEMPTS = env.integer(
    "LADDER_NOTIFY_MAX_ATTEMPTS", 8, why="attempts of one message"
)
LADDER_NOTIFY_RETRY_BACKOFF_S = max(
    1,
    env.integer(
        "LADDER_NOTIFY_RETRY_BACKOFF_S", 30, unit="s", why="first retry delay, doubled each retry"
    ),
)
LADDER_NOTIFY_RETRY_MAX_S = env.integer(
    "LADDER_NOTIFY_RETRY_MAX_S", 3600, unit="s", why="the longest retry delay"
)
LADDER_NOTIFY_RETRY_JITTER = env.flag(
    "LADDER_NOTIFY_RETRY_JITTER", True, why="retry delays jittered (Celery's retry_jitter)"
)
LADDER_NOTIFY_SWEEP_S = env.number(
    "LADDER_NOTIFY_SWEEP_S",
    120,
    unit="s",
    why="how often beat sends again the messages still owed after LADDER_QUEUED_GRACE_S",
)
LADDER_NOTIFY_REFUSED_QUIET_S = env.integer(
    "LADDER_NOTIFY_REFUSED_QUIET_S",
    3600,
    unit="s",
    why="a connected bot refused again for the same reason is told at most once per this long",
)
