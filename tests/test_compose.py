"""docker-compose.yml and the Dockerfile name only things that exist in this repository.

The stack itself is started by ``make compose-check`` (a real Docker engine, minutes).
What can rot silently is checked here instead: every service command names a module
that imports (and whose command line accepts the arguments) or a registered
management command (whose parser accepts them); every healthcheck of ours is the
shell probe (no interpreter per probe) with arguments it accepts; every
``depends_on`` names a defined service with a condition that can be met;
ENGINE_ADDRESS points at the engine service's port; host ports come from variables;
every profile passes ``docker-compose config`` where compose is installed.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
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


PROBE_MODES = {"http": (1, 2), "grpc": (2, 3), "fresh": (2, 2)}  # arguments: at least, at most


@pytest.mark.parametrize("service", [s for s in OURS if "healthcheck" in SERVICES[s]])
def test_our_healthchecks_are_the_shell_probe_and_start_no_interpreter(service: str) -> None:
    """A probe that starts Python took 6-9 s at load 30-40 and the services flapped to
    unhealthy; deploy/probe.sh (curl and the shell) is what every healthcheck runs."""
    test = SERVICES[service]["healthcheck"]["test"]
    assert test[0] == "CMD", test
    assert not any("python" in part for part in test), f"{service} starts Python: {test}"
    assert test[1] == "/app/deploy/probe.sh", test
    assert (ROOT / "deploy" / "probe.sh").stat().st_mode & 0o111, "probe.sh is not executable"
    low, high = PROBE_MODES[test[2]]
    assert low <= len(test) - 3 <= high, test
    if test[2] == "fresh":
        assert float(test[4]) > 0, test
    # The timeout the probe is given stays under the healthcheck's own.
    own = float(str(SERVICES[service]["healthcheck"]["timeout"]).rstrip("s"))
    if test[2] in ("http", "grpc") and len(test) - 3 == high:
        assert float(test[-1]) < own, test


def test_the_worker_healthcheck_reads_the_file_the_worker_touches() -> None:
    worker = SERVICES["worker"]
    test = worker["healthcheck"]["test"]
    assert test[2] == "fresh" and test[3] == worker["environment"]["LADDER_WORKER_ALIVE_FILE"]
    beat = SERVICES["beat"]
    assert beat["healthcheck"]["test"][3] == "/data/var/celerybeat-schedule"


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


def test_the_monitoring_profiles_are_off_by_default_and_published_on_loopback_only() -> None:
    for name in ("prometheus", "grafana", "flower"):
        spec = SERVICES[name]
        assert spec["profiles"], name
        assert all(port.startswith("127.0.0.1:") for port in spec["ports"]), name
    assert "monitoring" in SERVICES["prometheus"]["profiles"]
    assert "monitoring" in SERVICES["flower"]["profiles"]
    for name in ("web", "worker", "engine", "ladder-grpc"):
        env = SERVICES[name].get("environment") or {}
        assert str(env.get("LADDER_METRICS_PORT", "")).startswith("${LADDER_METRICS_PORT:-"), name


def dockerfile_stages() -> dict[str, str]:
    """The Dockerfile's stages by name (the last one, the runtime, as "runtime")."""
    text = (ROOT / "Dockerfile").read_text()
    parts = re.split(r"^FROM ", text, flags=re.MULTILINE)[1:]
    stages = {}
    for i, part in enumerate(parts):
        first = part.splitlines()[0].split()
        name = first[2] if len(first) > 2 and first[1].upper() == "AS" else str(i)
        stages["runtime" if i == len(parts) - 1 else name] = "FROM " + part
    return stages


def test_dockerfile_copies_what_exists_and_installs_the_s3_extra() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    build = dockerfile_stages()["build"]
    assert dockerfile.startswith("#") and "FROM python:3.11-slim" in dockerfile
    assert "['s3']" in build or "o['s3']" in build
    # Dependencies are installed before any code is copied, so a code edit keeps that layer.
    assert build.index("pip install -r") < build.index("COPY engine")
    for line in dockerfile.splitlines():
        if line.startswith("COPY ") and "--from=" not in line:
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), f"Dockerfile copies missing {source}"


def test_dockerfile_compiles_the_rules_core_and_the_runtime_has_no_compiler() -> None:
    """The image ran the pure rules build; a build stage compiles it with mypyc (and fails
    rather than ship the pure one), the runtime stage copies it and installs no compiler."""
    stages = dockerfile_stages()
    build, runtime = stages["build"], stages["runtime"]
    assert "engine.compile_rules" in build and "r.BUILD == 'compiled'" in build
    assert "COPY --from=build /app /app" in runtime and "COPY --from=build /opt/venv" in runtime
    for compiler in ("gcc", "build-essential", "python3-dev", "mypy", "clang"):
        assert compiler not in runtime.split("\n", 1)[1], f"runtime stage installs {compiler}"
    assert runtime.split()[1].startswith("python:3.11-slim"), "runtime on the slim image"
    # The two stages are the same Python (the compiled modules are for it).
    assert (
        build.split()[1].split(":")[1].split("-")[0]
        == runtime.split()[1].split(":")[1].split("-")[0]
    )
    user = re.findall(r"^USER (\S+)", runtime, flags=re.MULTILINE)
    assert user and user[-1] not in ("root", "0"), "the runtime runs as root"
    assert "engine/rules/_compiled" in (ROOT / ".dockerignore").read_text().split()


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


PUBLISHED_DEFAULTS = {
    "web": ("LADDER_WEB_PORT", "8000"),
    "ladder-grpc": ("LADDER_GRPC_PORT", "50052"),
    "prometheus": ("PROMETHEUS_PORT", "9090"),
    "grafana": ("GRAFANA_PORT", "3000"),
    "flower": ("FLOWER_PORT", "5555"),
}


def test_host_ports_come_from_variables_with_todays_defaults() -> None:
    """Moving a host port meant editing a copy of the file."""
    published = {name for name, spec in SERVICES.items() if spec.get("ports")}
    assert published == set(PUBLISHED_DEFAULTS)
    for name, (variable, default) in PUBLISHED_DEFAULTS.items():
        (port,) = SERVICES[name]["ports"]
        host = port.rsplit(":", 1)[0]
        assert f"${{{variable}:-{default}}}" in host, (name, port)


def test_one_pulled_image_missing_never_takes_a_whole_profile_down() -> None:
    """The monitoring profile failed whole when the Grafana image could not be pulled: each
    profile holds at most one service whose image comes from a registry."""
    profiles: dict[str, list[str]] = {}
    for name, spec in SERVICES.items():
        for profile in spec.get("profiles", []):
            profiles.setdefault(profile, []).append(name)
    for profile, names in profiles.items():
        pulled = [n for n in names if "build" not in SERVICES[n]]
        assert len(pulled) <= 1, f"profile {profile} pulls {pulled}"
    # Each monitoring service can also be started alone, by its own profile.
    assert "prometheus" in SERVICES["prometheus"]["profiles"]


def compose_cli() -> list[str] | None:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if (
        shutil.which("docker")
        and subprocess.run(
            ["docker", "compose", "version"], capture_output=True, check=False
        ).returncode
        == 0
    ):
        return ["docker", "compose"]
    return None


def all_profiles() -> list[str]:
    return sorted({p for spec in SERVICES.values() for p in spec.get("profiles", [])})


@pytest.mark.parametrize("profile", ["", *all_profiles()])
def test_docker_compose_config_accepts_every_profile(profile: str) -> None:
    """``docker-compose config`` (the tool's own validation) of the default services and of
    each profile, with the check's overlay too; where compose is not installed, skipped."""
    cli = compose_cli()
    if cli is None:
        if os.environ.get("CI") == "true":
            pytest.fail("docker-compose is not installed (.ci/run installs Debian's)")
        pytest.skip("neither docker-compose nor `docker compose` is installed here")
    env = {
        **os.environ,
        "POSTGRES_PASSWORD": "x",
        "DJANGO_SECRET_KEY": "y",
        "LADDER_WEB_PORT": "18123",
    }
    args = [*cli, "-f", "docker-compose.yml", "-f", "deploy/compose-check.yml"]
    if profile:
        args += ["--profile", profile]
    done = subprocess.run(
        [*args, "config"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    config = yaml.safe_load(done.stdout)
    assert "18123" in str(config["services"]["web"]["ports"])
    if profile:
        wanted = {n for n, spec in SERVICES.items() if profile in spec.get("profiles", [])}
        assert wanted <= set(config["services"]), wanted - set(config["services"])


WORKER_GRANTS = {
    "no-new-privileges:true",
    "seccomp=unconfined",
    "systempaths=unconfined",
    "apparmor=unconfined",
}


def test_the_worker_is_granted_what_the_sandbox_needs_and_nothing_else() -> None:
    """With seccomp and AppArmor unconfined alone bubblewrap could not mount a fresh /proc
    (Docker masks parts of it), so no hosted bot ever ran; privileged worked but grants
    everything. What it needs, measured in a container: docs/operations.md says why."""
    worker = SERVICES["worker"]
    assert set(worker["security_opt"]) == WORKER_GRANTS
    assert worker["cap_drop"] == ["ALL"] and "cap_add" not in worker
    assert not worker.get("privileged") and "user" not in worker  # the image's non-root user
    for name in OURS:
        if name != "worker":
            assert not SERVICES[name].get("security_opt"), name
            assert not SERVICES[name].get("privileged"), name
    documented = (ROOT / "docs" / "operations.md").read_text()
    for grant in (*WORKER_GRANTS, "cap_drop: [ALL]"):
        assert grant.split(":")[0] in documented, grant
