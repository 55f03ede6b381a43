"""A real SMTP server and a real webhook receiver on loopback for the notification tests.

Django's SMTP backend is pointed at the SMTP server; development mode lets the
webhook live on 127.0.0.1 over http (the ladder's SSRF rules allow loopback only
there), and retries are quick and unjittered so their delays can be checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.notify_servers import SmtpSink, WebhookReceiver, smtp_sink, webhook_receiver


@pytest.fixture
def smtp(settings: Any) -> Iterator[SmtpSink]:
    with smtp_sink() as sink:
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST = "127.0.0.1"
        settings.EMAIL_PORT = sink.port
        settings.EMAIL_TIMEOUT = 10
        settings.DEFAULT_FROM_EMAIL = "Ladder <ladder@ladder.test>"
        settings.LADDER_SITE_URL = "https://ladder.test"
        yield sink


@pytest.fixture
def receiver(settings: Any) -> Iterator[WebhookReceiver]:
    settings.LADDER_DEV_MODE = True
    with webhook_receiver() as r:
        yield r


@pytest.fixture(autouse=True)
def _quick_retries(settings: Any) -> None:
    settings.LADDER_NOTIFY_MAX_ATTEMPTS = 4
    settings.LADDER_NOTIFY_TIMEOUT_S = 5
    settings.LADDER_NOTIFY_RETRY_BACKOFF_S = 1
    settings.LADDER_NOTIFY_RETRY_MAX_S = 8
    settings.LADDER_NOTIFY_RETRY_JITTER = False
