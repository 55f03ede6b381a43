"""docker-compose.yml and the Dockerfile name only things that exist in this repository.

There is no Docker engine where these tests run, so the compose file is never
started here. What can rot silently is checked instead: every service command
names a module that imports (and whose command line accepts the arguments) or
a registered management command (whose parser accepts them); every healthcheck
of ours runs; every ``depends_on`` names a defined service with a condition
that can be met; ENGINE_ADDRESS points at the engine service's port.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import get_commands, load_command_class

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SERVICES: dict[str, dict[str, Any]] = COMPOSE["services"]
OURS = sorted(name for name, spec in SERVICES.items() if "build" in spec)


def check_celery_argv(args: list[str]) -> None:
    """``celery ARGS``: click refuses an unknown option even before ``--help`` (exit 2)."""
    done = subprocess.run(
        [sys.executable, "-m", "celery", *args, "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def check_gunicorn_argv(args: list[str]) -> None:
    """``gunicorn ARGS``: gunicorn's own parser accepts them and the config file loads."""
    from gunicorn.config import Config

    parsed = Config().parser().parse_args(args)
    config = ROOT / parsed.config
    assert config.is_file(), parsed.config
    namespace: dict[str, Any] = {"__file__": str(config)}
    exec(compile(config.read_text(), str(config), "exec"), namespace)
    assert namespace["bind"] and namespace["workers"] >= 1
    module, _, attribute = parsed.args[0].partition(":")
    assert callable(getattr(importlib.import_module(module), attribute)), parsed.args


def check_python_argv(argv: list[str]) -> None:
    """``python -m MODULE ARGS`` or ``python manage.py COMMAND ARGS``: it exists, ARGS parse."""
    assert argv[0] == "python", argv
    if argv[1:3] == ["-m", "celery"]:
        check_celery_argv(argv[3:])
    elif argv[1:3] == ["-m", "gunicorn"]:
        check_gunicorn_argv(argv[3:])
    elif argv[1] == "-m":
        module = importlib.import_module(argv[2])
        parse_args = getattr(module, "parse_args", None)
        assert parse_args is not None, f"{argv[2]} has no parse_args to check {argv[3:]}"
        parse_args(argv[3:])  # SystemExit (argparse) on an unknown option
    elif argv[1] == "manage.py":
        commands = get_commands()
        assert argv[2] in commands, f"manage.py {argv[2]} is not a registered command"
        command = load_command_class(commands[argv[2]], argv[2])
        command.create_parser("manage.py", argv[2]).parse_args(argv[3:])
    else:
        raise AssertionError(f"unexpected command {argv}")


def test_our_services_are_the_expected_ones() -> None:
    assert OURS == ["beat", "engine", "flower", "ladder-grpc", "migrate", "web", "worker"]
    assert {"postgres", "redis"} <= set(SERVICES)


def test_every_long_running_service_has_a_healthcheck_and_migrate_is_one_shot() -> None:
    for name, spec in SERVICES.items():
        if name == "migrate":
            assert spec["restart"] == "no" and "healthcheck" not in spec
        else:
            assert "healthcheck" in spec, f"{name} has no healthcheck"
    for name in OURS:
        if name not in {"migrate", "engine"}:
            # Nothing of the ladder starts on a schema older than its code.
            assert SERVICES[name]["depends_on"]["migrate"]["condition"] == (
                "service_completed_successfully"
            ), name


def test_one_beat_many_workers_engine_replicas_and_the_shared_broker() -> None:
    beat, worker, engine = SERVICES["beat"], SERVICES["worker"], SERVICES["engine"]
    assert beat["deploy"]["replicas"] == 1 and "ports" not in beat
    assert beat["command"][4:6] == ["workers.celery_app", "beat"]
    # --scale worker=N needs a service without a fixed container name or host port.
    assert "container_name" not in worker and "ports" not in worker
    assert worker["command"][4:6] == ["workers.celery_app", "worker"]
    assert "seccomp=unconfined" in worker["security_opt"]  # the sandbox's user namespace
    assert worker["depends_on"]["engine"]["condition"] == "service_healthy"
    assert str(engine["deploy"]["replicas"]).startswith("${ENGINE_REPLICAS:-")
    assert "ports" not in engine, "the engine is internal (docs/security.md)"
    for name in ("beat", "worker", "web", "ladder-grpc", "migrate"):
        env = SERVICES[name]["environment"]
        assert env["CELERY_BROKER_URL"] == "redis://redis:6379/0", name
    assert "bubblewrap" in (ROOT / "Dockerfile").read_text()


def test_web_is_gunicorn_and_no_service_runs_a_development_server() -> None:
    assert SERVICES["web"]["command"][:3] == ["python", "-m", "gunicorn"]
    for name, spec in SERVICES.items():
        assert "runserver" not in (spec.get("command") or []), name


def test_database_replays_and_schedule_are_on_volumes() -> None:
    assert "pgdata:/var/lib/postgresql/data" in SERVICES["postgres"]["volumes"]
    for name in ("web", "worker", "ladder-grpc"):
        assert "media:/data/media" in SERVICES[name]["volumes"], name
    assert "beat:/data/var" in SERVICES["beat"]["volumes"]


@pytest.mark.parametrize("service", OURS)
def test_command_names_an_existing_module_or_management_command(service: str) -> None:
    command = SERVICES[service]["command"]
    assert isinstance(command, list), "exec form: the process gets SIGTERM, not a shell"
    check_python_argv(command)


@pytest.mark.parametrize("service", [s for s in OURS if "healthcheck" in SERVICES[s]])
def test_our_healthchecks_are_runnable(service: str) -> None:
    test = SERVICES[service]["healthcheck"]["test"]
    assert test[0] == "CMD", test
    assert test[2] == "-m", "our healthchecks are python modules"
    check_python_argv(test[1:])
    help_run = subprocess.run(
        [sys.executable, "-m", test[3], "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert help_run.returncode == 0, help_run.stderr


def test_every_healthcheck_is_a_command_list() -> None:
    for name, spec in SERVICES.items():
        if "healthcheck" in spec:
            assert spec["healthcheck"]["test"][0] in {"CMD", "CMD-SHELL"}, name


def test_depends_on_names_defined_services_with_reachable_conditions() -> None:
    for name, spec in SERVICES.items():
        for dep, how in spec.get("depends_on", {}).items():
            assert dep in SERVICES, f"{name} depends on undefined {dep}"
            condition = how["condition"]
            if condition == "service_healthy":
                assert "healthcheck" in SERVICES[dep], f"{name}: {dep} has no healthcheck"
            elif condition == "service_completed_successfully":
                assert SERVICES[dep].get("restart") == "no", f"{name}: {dep} is not one-shot"
            else:
                assert condition == "service_started", condition


def test_engine_address_points_at_the_engine_service() -> None:
    listen = SERVICES["engine"]["command"][SERVICES["engine"]["command"].index("--listen") + 1]
    port = listen.rsplit(":", 1)[1]
    for name in OURS:
        address = (SERVICES[name].get("environment") or {}).get("ENGINE_ADDRESS")
        if address is not None:
            assert address == f"engine:{port}", name


def test_volumes_are_declared() -> None:
    declared = set(COMPOSE.get("volumes") or {})
    for name, spec in SERVICES.items():
        for mount in spec.get("volumes", []):
            source = mount.split(":", 1)[0]
            if source.startswith("./"):  # a file of this repository (the monitoring config)
                assert (ROOT / source).exists(), f"{name} mounts missing {source}"
            else:
                assert source in declared, f"{name} mounts undeclared volume {source}"


def test_the_monitoring_profile_is_off_by_default_and_published_on_loopback_only() -> None:
    for name in ("prometheus", "grafana", "flower"):
        spec = SERVICES[name]
        assert spec["profiles"] == ["monitoring"], name
        assert all(port.startswith("127.0.0.1:") for port in spec["ports"]), name
    for name in ("web", "worker", "engine", "ladder-grpc"):
        env = SERVICES[name].get("environment") or {}
        assert str(env.get("LADDER_METRICS_PORT", "")).startswith("${LADDER_METRICS_PORT:-"), name


def test_dockerfile_copies_what_exists_and_installs_the_s3_extra() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert dockerfile.startswith("#") and "FROM python:3.11-slim" in dockerfile
    assert 'pip install --no-deps ".[s3]"' in dockerfile and "['s3']" in dockerfile
    # Dependencies are installed before any code is copied, so a code edit keeps that layer.
    assert dockerfile.index("pip install -r") < dockerfile.index("COPY engine")
    assert "\nUSER " in dockerfile and "USER root" not in dockerfile
    for line in dockerfile.splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), f"Dockerfile copies missing {source}"


def test_production_like_defaults_and_every_required_variable_in_env_example() -> None:
    """No debug and no built-in secret unless the operator sets them (.env.example says how)."""
    text = (ROOT / "docker-compose.yml").read_text()
    env = SERVICES["web"]["environment"]
    assert env["DJANGO_DEBUG"] == "${DJANGO_DEBUG:-0}"
    assert env["LADDER_CACHE_URL"].startswith("redis://redis:")
    assert env["LADDER_DB_CONN_MAX_AGE"] == "${LADDER_DB_CONN_MAX_AGE:-60}"
    required = set(re.findall(r"\$\{(\w+):\?", text))
    assert {"DJANGO_SECRET_KEY", "POSTGRES_PASSWORD"} <= required
    example = (ROOT / ".env.example").read_text()
    listed = set(re.findall(r"^#?\s*(\w+)=", example, flags=re.MULTILINE))
    assert required <= listed, required - listed
    assert "dev-insecure" not in text and "POSTGRES_PASSWORD: ladder" not in text
    for ignore in (".gitignore", ".dockerignore"):
        assert ".env" in (ROOT / ignore).read_text().split(), ignore
