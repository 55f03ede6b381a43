"""What ``make run`` does with matches whose worker it had to kill (a second Ctrl-C).

Hard to catch for real (a match of the example bots lasts a fraction of a
second), so the claims are made here the way a worker makes them, on the test
database, and ``release_orphaned_matches`` runs as ``make run`` runs it: a
match claimed by a process of this machine that no longer exists is put back
in the queue and sent again; one whose worker process still lives, or that
another machine claimed, is left alone.
"""

from __future__ import annotations

import base64
import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from deploy.ladder import release_orphaned_matches
from ladder.matches.claims import match_start
from ladder.matches.creation import match_create
from ladder.matches.models import Match
from tests.support.broker import use_broker

pytestmark = pytest.mark.django_db


def dead_pid() -> int:
    """A pid no process has: above the kernel's maximum."""
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


def sent(queue: Path) -> list[int]:
    ids = []
    for path in sorted(queue.glob("*.msg")):
        message = json.loads(path.read_text())
        if message["headers"]["task"] == settings.LADDER_TASK_PLAY_MATCH:
            ids.extend(json.loads(base64.b64decode(message["body"]))[0])
    return ids


def test_matches_of_dead_local_workers_are_released_and_sent_again(
    settings: Any, tmp_path: Path, django_capture_on_commit_callbacks: Any
) -> None:
    from ladder.accounts.models import User
    from ladder.bots.services import bot_create

    use_broker(settings, {"LADDER_BROKER_DIR": str(tmp_path / "broker")}, tmp_path)
    queue = Path(settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"])
    settings.LADDER_DEV_MODE = True  # loopback endpoints; nothing is dialed here
    owner = User.objects.create_user(username="demo")
    bots = [
        bot_create(owner=owner, name=f"bot{i}", kind="remote", endpoint=f"127.0.0.1:{5000 + i}").pk
        for i in range(2)
    ]
    host = socket.gethostname()
    claims = {
        "dead": f"{host}:{dead_pid()}",
        "alive": f"{host}:{os.getpid()}",
        "elsewhere": f"another-{host}:{dead_pid()}",
    }
    matches = {}
    with django_capture_on_commit_callbacks(execute=True):
        for what, worker in claims.items():
            matches[what] = match_create(bot_ids=bots).pk
            match_start(match_id=matches[what], worker=worker)
    for path in queue.glob("*.msg"):
        path.unlink()  # the first deliveries (taken by the "workers" above)

    with django_capture_on_commit_callbacks(execute=True):
        assert release_orphaned_matches() == [matches["dead"]]

    dead = Match.objects.get(pk=matches["dead"])
    assert dead.status == Match.Status.QUEUED and dead.claimed_by == ""
    assert "stopped by make run" in dead.error
    assert sent(queue) == [matches["dead"]]
    for what in ("alive", "elsewhere"):
        assert Match.objects.get(pk=matches[what]).status == Match.Status.RUNNING, what
