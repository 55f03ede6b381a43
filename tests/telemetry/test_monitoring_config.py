"""The dashboard and alert rules under deploy/monitoring/ read metrics that exist.

A renamed metric would otherwise leave an empty panel or an alert that can
never fire. The rules go through Prometheus's own checker (``promtool``,
Debian's ``prometheus`` package; .ci/run installs it); every metric a query
names must be one the ladder's processes define.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "deploy" / "monitoring"
# Metrics that Prometheus itself makes (scrape health), not the ladder.
PROMETHEUS_OWN = {"up"}
PROMQL_WORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
    "bool", "offset", "inf", "nan",
}  # fmt: skip


def metric_names_in(expr: str) -> set[str]:
    """The metric names a PromQL expression reads (functions, labels and keywords left out)."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)  # strings
    expr = re.sub(r"\{[^}]*\}", "", expr)  # label matchers
    expr = re.sub(r"\[[^\]]*\]", "", expr)  # ranges
    expr = re.sub(r"\b\d+(?:\.\d+)?(?:e\d+|[smhdwy]+)?\b", "", expr)  # numbers, durations
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", expr):
        word = match.group(0)
        following = expr[match.end() :].lstrip()
        if following.startswith("(") or word.lower() in PROMQL_WORDS:
            continue
        names.add(word)
    return names


def dashboard_exprs() -> list[str]:
    board = json.loads((MONITORING / "grafana" / "dashboards" / "ladder.json").read_text())
    return [t["expr"] for panel in board["panels"] for t in panel.get("targets", [])]


def alert_exprs() -> list[str]:
    rules = yaml.safe_load((MONITORING / "alerts.yml").read_text())
    return [rule["expr"] for group in rules["groups"] for rule in group["rules"]]


@pytest.fixture
def defined_metrics(db: Any, settings: Any, tmp_path: Path) -> set[str]:
    """Every sample name the ladder's processes can expose, as Prometheus sees it."""
    from django.test import Client
    from prometheus_client import REGISTRY
    from prometheus_client.parser import text_string_to_metric_families

    # These modules define their metrics on import.
    import engine.metrics
    import ladder.common.metrics  # noqa: F401
    import telemetry.rpc  # noqa: F401
    import workers.metrics  # noqa: F401

    names: set[str] = set()
    for family in REGISTRY.collect():
        names |= {family.name, *(sample.name for sample in family.samples)}
        names |= {f"{family.name}_{suffix}" for suffix in ("total", "bucket", "count", "sum")}
    settings.MEDIA_ROOT = str(tmp_path)
    client = Client(REMOTE_ADDR="127.0.0.1")
    client.get("/metrics")  # labelled metrics appear once they have a sample: this one
    page = client.get("/metrics").content.decode()
    for family in text_string_to_metric_families(page):
        names |= {family.name, *(sample.name for sample in family.samples)}
    names |= {family.name for family in engine.metrics.GamesOpen(lambda: 0).collect()}
    return names


def test_every_dashboard_query_reads_a_defined_metric(defined_metrics: set[str]) -> None:
    exprs = dashboard_exprs()
    assert len(exprs) >= 20
    for expr in exprs:
        unknown = metric_names_in(expr) - defined_metrics - PROMETHEUS_OWN
        assert not unknown, f"{expr!r} reads {unknown}"


def test_every_alert_reads_a_defined_metric(defined_metrics: set[str]) -> None:
    for expr in alert_exprs():
        unknown = metric_names_in(expr) - defined_metrics - PROMETHEUS_OWN
        assert not unknown, f"{expr!r} reads {unknown}"


def test_alert_rules_pass_promtool() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool is not installed (.ci/run installs Debian's prometheus)")
        pytest.skip("promtool is not installed (apt-get install prometheus)")
    done = subprocess.run(
        [promtool, "check", "rules", str(MONITORING / "alerts.yml")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SUCCESS: 7 rules found" in done.stdout


def test_the_prometheus_config_scrapes_every_ladder_process_and_loads_the_rules() -> None:
    config = yaml.safe_load((MONITORING / "prometheus.yml").read_text())
    jobs = {job["job_name"] for job in config["scrape_configs"]}
    assert {"web", "ladder-grpc", "worker", "engine"} <= jobs
    assert config["rule_files"] == ["/etc/prometheus/alerts.yml"]
    promtool = shutil.which("promtool")
    if promtool is not None:  # the rules path is the container's: check the syntax only
        done = subprocess.run(
            [promtool, "check", "config", "--syntax-only", str(MONITORING / "prometheus.yml")],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr


def test_the_expression_reader_finds_names() -> None:
    """The check above can fail: it sees a metric inside functions, matchers and groupings."""
    expr = 'sum by (le) (rate(foo_bucket{job="a"}[5m])) / bar + baz offset 5m'
    assert metric_names_in(expr) == {"foo_bucket", "bar", "baz"}
