"""Every metric an alert or a panel reads is served by a target the shipped Prometheus scrapes.

``test_monitoring_config`` checks that each metric exists somewhere in the ladder; this
checks where. The ladder's state (``ladder_matches_queued``, the oldest wait, the last
hour's finished and errored, media disk use) existed only on Django's ``/metrics`` on
port 8000, answered to loopback only, while Prometheus scraped ``web:9100``: four of the
seven alerts could never fire. Here each scrape job of ``deploy/monitoring/prometheus.yml``
is matched to its compose service, and what that service's process serves is read:

- beat (the ladder's state) and the engine: the real process is started with its compose
  command on a free metrics port and scraped;
- web, ladder-grpc and worker: in multiprocess mode a labelled metric appears only once a
  sample is written, so their families are read from the registry of a fresh interpreter
  that imports what the process imports (every metric of theirs is made at import).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.support.scrape import free_port
from tests.telemetry.test_monitoring_config import (
    PROMETHEUS_OWN,
    alert_exprs,
    dashboard_exprs,
    metric_names_in,
)

ROOT = Path(__file__).resolve().parents[2]
PROMETHEUS = yaml.safe_load((ROOT / "deploy" / "monitoring" / "prometheus.yml").read_text())
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
DEFAULT_METRICS_PORT = 9100  # ${LADDER_METRICS_PORT:-9100}
START_TIMEOUT_S = 60.0

# What each multiprocess service's processes import (their metrics are made at import).
IMPORTS = {
    "web": "import django; django.setup(); import ladder.wsgi, ladder.urls",
    "ladder-grpc": "import django; django.setup(); "
    "import ladder.grpc.management.commands.grpcserver, ladder.grpc.server",
    "worker": "import django; django.setup(); import workers.celery_app, workers.tasks",
}


def job_targets() -> dict[str, tuple[str, int]]:
    """Scrape job -> (compose service, port) as the shipped config names them."""
    targets = {}
    for job in PROMETHEUS["scrape_configs"]:
        if "dns_sd_configs" in job:
            (sd,) = job["dns_sd_configs"]
            (name,) = sd["names"]
            targets[job["job_name"]] = (name, int(sd["port"]))
        else:
            (static,) = job["static_configs"]
            (target,) = static["targets"]
            host, port = target.rsplit(":", 1)
            targets[job["job_name"]] = (host, int(port))
    return targets


def names_of(samples: dict[str, Any]) -> set[str]:
    names = set(samples)
    for name in list(names):
        for suffix in ("_total", "_bucket", "_count", "_sum", "_created"):
            if name.endswith(suffix):
                names.add(name.removesuffix(suffix))
    return names


def families(url: str) -> set[str]:
    """Every family a text exposition declares (with or without samples) and its samples."""
    with urllib.request.urlopen(url, timeout=5) as reply:
        text = reply.read().decode()
    names: set[str] = set()
    for family in text_string_to_metric_families(text):
        names |= {family.name, *(sample.name for sample in family.samples)}
    return names_of(dict.fromkeys(names))


def metrics_port_of(service: str) -> int:
    env = COMPOSE[service].get("environment") or {}
    value = str(env.get("LADDER_METRICS_PORT", ""))
    match = re.fullmatch(r"\$\{LADDER_METRICS_PORT:-(\d+)\}", value)
    return int(match.group(1)) if match else 0


def scrape_process(argv: list[str], env: dict[str, str], port: int) -> set[str]:
    """Start a process, scrape its /metrics once it answers, stop it."""
    proc = subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                return families(f"http://127.0.0.1:{port}/metrics")
            except (urllib.error.URLError, OSError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    proc.kill()
                    output = proc.communicate(timeout=10)[0]
                    pytest.fail(f"{argv} served no metrics: {output[-3000:]}")
                time.sleep(0.25)
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def declared(service: str, env: dict[str, str]) -> set[str]:
    code = (
        IMPORTS[service]
        + "; import json; from prometheus_client import REGISTRY; "
        + "print(json.dumps(sorted(REGISTRY._names_to_collectors)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return names_of(dict.fromkeys(json.loads(done.stdout.strip().splitlines()[-1])))


@pytest.fixture
def served(transactional_db: Any, settings: Any, tmp_path: Path) -> dict[str, set[str]]:
    """Scrape job -> the metric names its target serves."""
    db = settings.DATABASES["default"]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ladder.settings"}
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    if db["ENGINE"].endswith("postgresql"):
        env["DATABASE_URL"] = (
            f"postgres://{db['USER']}:{db.get('PASSWORD') or ''}@{db['HOST'] or '127.0.0.1'}:"
            f"{db['PORT'] or 5432}/{db['NAME']}"
        )
    else:
        pytest.skip("the ladder-state target is read from PostgreSQL here (DATABASE_URL)")
    env["LADDER_MEDIA_ROOT"] = str(tmp_path / "media")
    (tmp_path / "media").mkdir()
    env["CELERY_BROKER_URL"] = os.environ.get("LADDER_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
    env["LADDER_METRICS_ADDR"] = "127.0.0.1"
    result: dict[str, set[str]] = {}
    for job, (service, port) in job_targets().items():
        assert service in COMPOSE, f"job {job} scrapes {service}, not a compose service"
        if service == "flower":
            assert port == 5555 and "--port=5555" in COMPOSE["flower"]["command"]
            result[job] = set()  # Celery's own monitor: no alert or panel reads it
            continue
        assert port == metrics_port_of(service) == DEFAULT_METRICS_PORT, (
            f"job {job} scrapes {service}:{port}, which serves metrics on "
            f"{metrics_port_of(service) or 'no port'}"
        )
        local = free_port()
        run_env = {**env, "LADDER_METRICS_PORT": str(local)}
        command = [sys.executable, *COMPOSE[service]["command"][1:]]
        if service == "beat":
            command += ["--schedule", str(tmp_path / "celerybeat-schedule")]
            result[job] = scrape_process(command, run_env, local)
        elif service == "engine":
            command = [sys.executable, "-m", "engine.server", "--listen", "127.0.0.1:0"]
            result[job] = scrape_process(command, run_env, local)
        else:
            result[job] = declared(service, env)
    return result


def wanted() -> list[tuple[str, str, str | None]]:
    """(where, metric, job it must come from or None) for every metric a query reads."""
    out = []
    for where, exprs in (("alert", alert_exprs()), ("panel", dashboard_exprs())):
        for expr in exprs:
            job = re.search(r'job="([^"]+)"', expr)
            for name in metric_names_in(expr) - PROMETHEUS_OWN:
                out.append((f"{where} {expr!r}", name, job.group(1) if job else None))
    return out


def test_every_alert_and_panel_metric_is_scraped(served: dict[str, set[str]]) -> None:
    missing = []
    for where, name, job in wanted():
        jobs = [job] if job else list(served)
        if not any(name in served.get(j, set()) for j in jobs):
            missing.append(f"{name} ({where}) is served by no scraped target {jobs}")
    assert not missing, "\n".join(missing)
    # The ladder's state, by name: the alerts on the queue and the errors read it.
    state = {
        "ladder_matches_queued",
        "ladder_oldest_queued_match_age_seconds",
        "ladder_matches_finished_last_hour",
        "ladder_matches_errored_last_hour",
        "ladder_media_disk_used_ratio",
    }
    scraped = set().union(*served.values())
    assert state <= scraped, state - scraped
    for _, _, job in wanted():
        assert job is None or job in served, f"a query selects job {job}, which is not scraped"
