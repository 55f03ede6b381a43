"""The ladder's web process as deployed, for tests: gunicorn, ``DJANGO_DEBUG=0``, static files.

``production_env`` is the environment of such a process on the test database
(``django_db(transaction=True)`` tests: it sees committed rows), with every
limit out of the way unless the test sets one; ``collect_static`` runs
``collectstatic`` as a deployment does (DEBUG off serves hashed names, and an
error page needs them).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.database import database_url
from tests.support.processes import ROOT

SECRET = "test-only-" + "k" * 40
NO_LIMITS = {
    "LADDER_THROTTLE_ANON": "1000000/min",
    "LADDER_THROTTLE_USER": "1000000/min",
    "LADDER_VIEWER_UPLOAD_RATE": "1000000/min",
    "LADDER_AUTH_FAILURES_PER_ADDRESS": "1000000/min",
    "LADDER_AUTH_FAILURES_PER_ACCOUNT": "1000000/min",
}


def collect_static(root: Path) -> str:
    env = {**os.environ, "LADDER_STATIC_ROOT": str(root), "DJANGO_DEBUG": "0",
           "DJANGO_SECRET_KEY": SECRET}  # fmt: skip
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=ROOT, env=env, check=True, timeout=120,
    )  # fmt: skip
    return str(root)


def production_env(
    *, media_root: str, static_root: str, tmp: Path, **overrides: str
) -> dict[str, str]:
    """A web process's environment on the test database (call inside a db-enabled test)."""
    return {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "ladder.settings",
        "DATABASE_URL": database_url(),
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": SECRET,
        "LADDER_MEDIA_ROOT": media_root,
        "LADDER_STATIC_ROOT": static_root,
        "LADDER_DEV_MODE": "1",
        "LADDER_BROKER_DIR": str(tmp / "broker"),
        "CELERY_BROKER_URL": "",
        "REDIS_URL": "",
        "LADDER_CACHE_URL": "",
        "LADDER_WEB_ACCESS_LOG": "",
        "LADDER_LOG_LEVEL": "WARNING",
        **NO_LIMITS,
        **overrides,
    }
