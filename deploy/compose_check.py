"""``make compose-check``: the shipped compose stack, built and played on a real Docker engine.

    python -m deploy.compose_check [--matches 12] [--keep]

Builds the images, starts docker-compose.yml (with the ``prometheus`` profile and
``deploy/compose-check.yml``'s remote bot) under a project name and host ports of
its own (so an operator's running stack is untouched), waits for every service to be
healthy, uploads a hosted bot and waits for its smoke match to make it valid, plays
matches between it and the remote bot, scales the workers to three, kills one
while it plays a match, then checks exactly once (one result per match, none twice)
and that Prometheus holds the ladder's state metrics (``ladder_matches_queued``).
Everything is taken down at the end, volumes included (``--keep`` leaves it up).

Compose v1 (``docker-compose`` 1.x) cannot pass the worker's ``systempaths=unconfined``
to the engine (it refuses the container): with v1 the check starts the worker replicas
itself with ``docker run`` and exactly the settings the compose file gives the worker
service (read back from ``docker-compose config``), on the stack's network under the
name ``worker``; every other service is started by compose.

Prints what it measured: image sizes, time to healthy, the hosted version's smoke
outcome, matches played, the killed worker and its match, the Prometheus answer,
and what the worker container is granted. Exit 0 when every check passed, 1 when
one failed, 2 when Docker (the engine or compose) is missing here.

The base images are the ones the files name (pulled as usual); on a machine with no
registry, build stand-ins first: ``deploy/standin-images.sh`` (docs/operations.md).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "ddcheck"
# Host ports of the check: away from the defaults, so a stack on them keeps running.
PORTS = {
    "LADDER_WEB_PORT": "18000",
    "LADDER_GRPC_PORT": "15052",
    "PROMETHEUS_PORT": "19090",
    "FLOWER_PORT": "15555",
    "GRAFANA_PORT": "13000",
}
HEALTHY_TIMEOUT_S = 600.0
VALID_TIMEOUT_S = 300.0
PLAY_TIMEOUT_S = 900.0
WORKERS = 3
V1_WORKER_LABEL = f"digdown.compose-check={PROJECT}-worker"


def say(text: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} compose-check: {text}", flush=True)


class CheckFailed(Exception):
    pass


def compose_cli() -> list[str] | None:
    """``docker compose`` (v2) or ``docker-compose`` (v1), whichever this machine has."""
    if shutil.which("docker") is None:
        return None
    v2 = subprocess.run(["docker", "compose", "version"], capture_output=True, check=False)
    if v2.returncode == 0:
        return ["docker", "compose"]
    return ["docker-compose"] if shutil.which("docker-compose") else None


def docker_missing() -> str:
    """Why this check cannot run here ("" when it can)."""
    if shutil.which("docker") is None:
        return "the docker command is not installed"
    info = subprocess.run(["docker", "info"], capture_output=True, text=True, check=False)
    if info.returncode != 0:
        return f"no Docker engine answers: {info.stderr.strip()[-300:]}"
    if compose_cli() is None:
        return "neither `docker compose` nor `docker-compose` is installed"
    return ""


class Stack:
    def __init__(self, cli: list[str]) -> None:
        self.cli = cli
        self.env = {
            **os.environ,
            **PORTS,
            "COMPOSE_PROJECT_NAME": PROJECT,
            "POSTGRES_PASSWORD": secrets.token_hex(16),
            "DJANGO_SECRET_KEY": secrets.token_hex(32),
            # The remote bot is on the stack's network (a private address).
            "LADDER_ENDPOINT_ALLOWED_NETWORKS": "10.0.0.0/8,172.16.0.0/12,192.168.0.0/16",
            "COMPOSE_PROFILES": "prometheus",
        }

    def argv(self, *args: str) -> list[str]:
        return [
            *self.cli,
            "-f",
            str(ROOT / "docker-compose.yml"),
            "-f",
            str(ROOT / "deploy" / "compose-check.yml"),
            "--profile",
            "prometheus",
            *args,
        ]

    def compose(self, *args: str, capture: bool = False, timeout: float = 1800) -> str:
        argv = self.argv(*args)
        done = subprocess.run(
            argv,
            cwd=ROOT,
            env=self.env,
            text=True,
            capture_output=capture,
            timeout=timeout,
            check=False,
        )
        if done.returncode != 0:
            detail = (done.stderr or "")[-2000:] if capture else ""
            raise CheckFailed(f"{' '.join(argv[len(self.cli) :])} failed: {detail}")
        return done.stdout or ""

    def fixture(self, *args: str) -> Any:
        out = self.compose(
            "exec", "-T", "web", "python", "-m", "deploy.compose_fixture", *args, capture=True
        )
        return json.loads(out.strip().splitlines()[-1])

    @property
    def v1(self) -> bool:
        return self.cli == ["docker-compose"]

    def containers(self, service: str | None = None) -> list[str]:
        if service == "worker" and self.v1:
            return self.v1_workers()
        args = ["ps", "-q"] + ([service] if service else [])
        found = [c for c in self.compose(*args, capture=True).split() if c]
        return found + (self.v1_workers() if service is None and self.v1 else [])

    # --- compose v1: the worker replicas by `docker run` ----------------------------------

    def v1_workers(self) -> list[str]:
        done = subprocess.run(
            ["docker", "ps", "-q", "--no-trunc", "--filter", f"label={V1_WORKER_LABEL}"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        return done.stdout.split()

    def v1_start_workers(self, count: int) -> None:
        """Start worker replicas until ``count`` run, as compose v2 would make them."""
        import yaml

        config = yaml.safe_load(self.compose("config", capture=True))
        spec = config["services"]["worker"]
        network = f"{PROJECT}_default"
        args = ["docker", "run", "-d", "--network", network, "--network-alias", "worker"]
        args += ["--label", V1_WORKER_LABEL, "--restart", "unless-stopped"]
        args += ["--stop-timeout", "15"]
        for key, value in (spec.get("environment") or {}).items():
            args += ["-e", f"{key}={'' if value is None else value}"]
        declared = set(config.get("volumes") or {})
        for volume in spec.get("volumes") or []:
            if isinstance(volume, dict):
                source, target = volume["source"], volume["target"]
            else:
                source, target = volume.split(":")[:2]
            if source in declared:  # a named volume: compose names it after the project
                source = f"{PROJECT}_{source}"
            args += ["-v", f"{source}:{target}"]
        for cap in spec.get("cap_drop") or []:
            args += ["--cap-drop", cap]
        for opt in spec.get("security_opt") or []:
            args += ["--security-opt", opt]
        health = spec["healthcheck"]
        args += ["--health-cmd", " ".join(health["test"][1:])]
        for key in ("interval", "timeout", "start_period"):
            if key in health:
                args += [f"--health-{key.replace('_', '-')}", str(health[key])]
        args += ["--health-retries", str(health["retries"])]
        running = len(self.v1_workers())
        for n in range(running, count):
            name = ["--name", f"{PROJECT}_worker_run_{n + 1}"]
            subprocess.run([*args, *name, spec["image"], *spec["command"]], check=True,
                           capture_output=True, text=True)  # fmt: skip

    def v1_remove_workers(self) -> None:
        workers = self.v1_workers() + subprocess.run(
            ["docker", "ps", "-aq", "--no-trunc", "--filter", f"label={V1_WORKER_LABEL}"],
            capture_output=True, text=True, check=False,
        ).stdout.split()  # fmt: skip
        if workers:
            subprocess.run(["docker", "rm", "-f", *set(workers)], capture_output=True, check=False)

    def scale_workers(self, count: int) -> None:
        if self.v1:
            self.v1_start_workers(count)
        else:
            self.compose("up", "-d", "--no-recreate", "--scale", f"worker={count}")


def inspect(container: str) -> dict[str, Any]:
    out = subprocess.run(
        ["docker", "inspect", container], capture_output=True, text=True, check=True
    ).stdout
    return dict(json.loads(out)[0])


def wait_healthy(stack: Stack, timeout_s: float) -> float:
    """Seconds until every container with a healthcheck is healthy (the one-shot migrate
    has exited 0)."""
    started = time.monotonic()
    last = ""
    while time.monotonic() - started < timeout_s:
        states = {}
        for c in stack.containers():
            info = inspect(c)
            name = info["Name"].lstrip("/")
            state = info["State"]
            if "Health" in state:
                states[name] = state["Health"]["Status"]
            elif state["Status"] == "exited":
                states[name] = "done" if state["ExitCode"] == 0 else f"exit {state['ExitCode']}"
            else:
                states[name] = state["Status"]
        bad = {n: s for n, s in states.items() if s not in ("healthy", "done")}
        line = ", ".join(f"{n}={s}" for n, s in sorted(bad.items()))
        if states and not bad:
            return time.monotonic() - started
        if any(s.startswith("exit") or s == "unhealthy" for s in bad.values()):
            raise CheckFailed(f"not healthy: {line}")
        if line != last:
            say(f"waiting for health: {line or 'no containers yet'}")
            last = line
        time.sleep(3)
    raise CheckFailed(f"not healthy within {timeout_s:.0f} s: {last}")


def prometheus_query(query: str) -> list[Any]:
    port = PORTS["PROMETHEUS_PORT"]
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": query})
    with urllib.request.urlopen(url, timeout=10) as reply:
        return list(json.load(reply)["data"]["result"])


def image_sizes() -> list[str]:
    names = ["digdown-ladder:latest", "postgres:16", "redis:7", "prom/prometheus:v2.53.0"]
    lines = []
    for name in names:
        done = subprocess.run(
            ["docker", "image", "inspect", "-f", "{{.Size}}", name],
            capture_output=True,
            text=True,
            check=False,
        )
        size = int(done.stdout.strip() or 0)
        lines.append(f"{name} {size / 1e6:.0f} MB" if size else f"{name} (absent)")
    return lines


def granted(container: str) -> str:
    host = inspect(container)["HostConfig"]
    config = inspect(container)["Config"]
    return (
        f"user {config.get('User') or 'root'}, privileged {host.get('Privileged')}, "
        f"cap_add {host.get('CapAdd')}, cap_drop {host.get('CapDrop')}, "
        f"security_opt {host.get('SecurityOpt')}, masked paths "
        f"{'none' if not host.get('MaskedPaths') else len(host['MaskedPaths'])}"
    )


def run(args: argparse.Namespace, stack: Stack) -> list[str]:
    """The check itself; returns the lines of its summary."""
    summary = []
    say("building the images (docker-compose build) ...")
    started = time.monotonic()
    stack.compose("build")
    summary.append(
        f"images built in {time.monotonic() - started:.0f} s: " + "; ".join(image_sizes())
    )
    say(summary[-1])

    say("starting the stack ...")
    started = time.monotonic()
    if stack.v1:
        say("compose v1: the worker replicas are started with docker run (see --help)")
        stack.compose("up", "-d", "--scale", "worker=0")
        wait_healthy(stack, HEALTHY_TIMEOUT_S)
        stack.scale_workers(1)
    else:
        stack.compose("up", "-d")
    wait_healthy(stack, HEALTHY_TIMEOUT_S)
    took = time.monotonic() - started
    summary.append(f"every service healthy {took:.0f} s after `up -d` (migrations included)")
    say(summary[-1])

    worker = stack.containers("worker")[0]
    logs = subprocess.run(["docker", "logs", worker], capture_output=True, text=True, check=False)
    sandbox_line = next(
        (ln for ln in (logs.stdout + logs.stderr).splitlines() if "hosted bots:" in ln), ""
    )
    summary.append(f"worker container granted: {granted(worker)}")
    summary.append(f"worker says: {sandbox_line.strip()[-300:]}")
    say(summary[-2])
    say(summary[-1])

    ids = stack.fixture("setup", "remote-bot:50061")
    say(f"uploaded the hosted bot and registered the remote one: {ids}")
    deadline = time.monotonic() + VALID_TIMEOUT_S
    while True:
        version = stack.fixture("status")["hosted_version"]
        if version["status"] != "pending":
            break
        if time.monotonic() > deadline:
            raise CheckFailed(f"hosted version still pending after {VALID_TIMEOUT_S:.0f} s")
        time.sleep(3)
    summary.append(f"hosted version: {version['status']} ({version['outcome']})")
    say(summary[-1])
    if version["status"] != "valid":
        raise CheckFailed(summary[-1])

    say(f"scaling the workers to {WORKERS} ...")
    stack.scale_workers(WORKERS)
    wait_healthy(stack, HEALTHY_TIMEOUT_S)
    # The watcher runs inside the stack before the matches are queued: a match of two bots
    # lasts seconds, less than a poll from here takes.
    watcher = subprocess.Popen(
        stack.argv("exec", "-T", "web", "python", "-m", "deploy.compose_fixture", "running", "180"),
        cwd=ROOT, env=stack.env, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    time.sleep(15)
    queued = stack.fixture("queue", str(args.matches))["queued"]
    say(f"queued {len(queued)} matches hosted vs remote")

    killed = ""
    out = watcher.communicate(timeout=240)[0].strip().splitlines()
    match = json.loads(out[-1]) if out else {}
    if match:
        # claimed_by is "HOSTNAME:PID"; a container's hostname is its id's first 12.
        host = match["claimed_by"].rpartition("@")[2].split(":")[0]
        victims = [c for c in stack.containers("worker") if host and c.startswith(host)]
        if victims:
            subprocess.run(["docker", "kill", victims[0]], check=True, capture_output=True)
            killed = f"worker {victims[0][:12]} killed while playing match {match['id']}"
            summary.append(killed)
            say(killed)
    deadline = time.monotonic() + PLAY_TIMEOUT_S
    while time.monotonic() < deadline:
        status = stack.fixture("status")
        counts = status["matches"]
        if counts.get("queued", 0) + counts.get("running", 0) == 0:
            break
        time.sleep(2)
    else:
        raise CheckFailed(f"matches not played within {PLAY_TIMEOUT_S:.0f} s: {counts}")
    if not killed:
        raise CheckFailed("no worker was seen playing a match, so none was killed")
    result = stack.fixture("verify")
    summary.append(
        f"matches: {result['statuses']}; played twice (attempts > 1): "
        f"{result['attempts_over_1']}; recorded twice: {result['recorded_twice']}; "
        f"exactly once: {result['exactly_once']}"
    )
    say(summary[-1])
    if not result["exactly_once"] or result["finished"] < args.matches:
        raise CheckFailed(summary[-1])

    deadline = time.monotonic() + 90
    while True:
        answer = prometheus_query("ladder_matches_queued")
        if answer or time.monotonic() > deadline:
            break
        time.sleep(5)
    summary.append(f"Prometheus ladder_matches_queued: {json.dumps(answer)}")
    say(summary[-1])
    if not answer:
        raise CheckFailed("Prometheus holds no ladder_matches_queued")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.compose_check", description=__doc__)
    parser.add_argument("--matches", type=int, default=16, help="matches to play (default 16)")
    parser.add_argument("--keep", action="store_true", help="leave the stack up at the end")
    args = parser.parse_args(argv)
    why = docker_missing()
    if why:
        print(f"compose-check: cannot run: {why} (it needs Docker and compose)", file=sys.stderr)
        return 2
    cli = compose_cli()
    assert cli is not None
    stack = Stack(cli)
    try:
        summary = run(args, stack)
    except (CheckFailed, subprocess.SubprocessError) as exc:
        say(f"FAILED: {exc}")
        with_logs = subprocess.run(
            [*stack.cli, "-f", str(ROOT / "docker-compose.yml"), "-f",
             str(ROOT / "deploy" / "compose-check.yml"), "logs", "--tail", "40"],
            cwd=ROOT, env=stack.env, check=False, capture_output=True, text=True,
        )  # fmt: skip
        print(with_logs.stdout[-8000:], flush=True)
        return 1
    finally:
        if not args.keep:
            say("taking everything down (volumes included) ...")
            if stack.v1:
                stack.v1_remove_workers()
            stack.compose("down", "-v", "--remove-orphans", capture=True)
    print("\ncompose-check passed:")
    for line in summary:
        print(f"  - {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
