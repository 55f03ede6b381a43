"""Point this process's Celery producer at a test's own broker, as the environment would.

``ladder.settings.celery_broker`` turns CELERY_BROKER_URL / REDIS_URL /
LADDER_BROKER_DIR into the broker settings; tests apply its answer through
pytest-django's ``settings`` fixture (the producer is rebuilt on the change),
and hand the same variables to the worker processes they start.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ladder.settings import celery_broker


def use_broker(settings: Any, env: dict[str, str], tmp: Path) -> None:
    url, transport, options = celery_broker(env, tmp / "broker", 600)
    settings.CELERY_BROKER_URL = url
    settings.CELERY_BROKER_TRANSPORT = transport
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = options
