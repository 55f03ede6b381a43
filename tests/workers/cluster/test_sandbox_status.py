"""A worker says how it runs hosted bots: in its start-up log and to its health probe.

The sandbox's mode (root or user namespace), its system-call filter, and the
resource mode (a cgroup per seat with limits, a cgroup for accounting, or
rlimits only), from a real ``celery worker`` on a real Redis broker and from
``python -m deploy.health worker`` asking it.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from tests.support.processes import ROOT
from tests.support.sandbox import require_sandbox

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(120)]


def test_start_up_log_and_health_say_the_sandbox_mode(make_cluster: Any) -> None:
    require_sandbox()
    cluster = make_cluster("redis")
    worker = cluster.start_worker()
    log = worker.log()
    assert "hosted bots: sandbox root, seccomp on, resources: " in log or (
        "hosted bots: sandbox userns, seccomp on, resources: " in log
    ), log[-2000:]
    assert any(mode in log for mode in ("cgroup v2 per seat", "rlimits only")), log[-2000:]
    probe = subprocess.run(
        [sys.executable, "-m", "deploy.health", "worker", "--name", worker.name, "--timeout", "10"],
        cwd=ROOT,
        env=cluster.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    assert "seccomp on, resources " in probe.stdout, probe.stdout
