"""The processes of ``make run``: each started in a session of its own, waited on until
it is ready, stopped through its main process, and swept with its whole group at the end.

Every wait is bounded; a process that dies while starting is reported with the end of
its log.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
START_TIMEOUT_S = 60.0
POLL_S = 0.25


def say(text: str = "") -> None:
    print(text, flush=True)


def step(text: str) -> None:
    say(f"  ... {text}")


def done(text: str) -> None:
    say(f"  ok  {text}")


@dataclass
class Service:
    """One process of the ladder: how it starts, how we know it is up, where it logs."""

    name: str
    argv: list[str]
    ready: Callable[[Service], bool]
    what: str
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    log_start: int = 0  # where this run's output begins in the log

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, lines: int = 20) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def pick_port(wanted: int) -> int:
    """``wanted`` if nothing listens there, else a free port (the banner shows it)."""
    if wanted and port_free(wanted):
        return wanted
    with socket.socket() as s:
        s.bind((HOST, 0))
        port = int(s.getsockname()[1])
    if wanted:
        say(f"  !!  port {wanted} is in use: {port} instead")
    return port


def grpc_ready(service: str, port: int, host: str = HOST) -> Callable[[Service], bool]:
    def check(_: Service) -> bool:
        import grpc

        from digdown.healthcheck import SERVING, status

        with grpc.insecure_channel(f"{host}:{port}") as channel:
            return status(channel, service, 0.5) == SERVING

    return check


def http_ready(port: int, host: str = HOST) -> Callable[[Service], bool]:
    def check(_: Service) -> bool:
        try:
            with urllib.request.urlopen(f"http://{host}:{port}/", timeout=2) as reply:
                return int(reply.status) < 500
        except (urllib.error.URLError, OSError):
            return False

    return check


def log_says(text: str) -> Callable[[Service], bool]:
    """Ready once ``text`` is in what the process wrote in this run (the log is appended to)."""

    def check(svc: Service) -> bool:
        if svc.log_path is None:
            return False
        with svc.log_path.open("rb") as log:
            log.seek(svc.log_start)
            return text.encode() in log.read()

    return check


class Stack:
    """The started processes, each in a session of its own, logging to ``log_dir``."""

    def __init__(self, log_dir: Path, env: dict[str, str]) -> None:
        self.log_dir = log_dir
        self.env = env
        self.services: list[Service] = []
        self._logs: list[IO[bytes]] = []

    def start(self, svc: Service, timeout_s: float = START_TIMEOUT_S) -> Service:
        svc.log_path = self.log_dir / f"{svc.name}.log"
        log = svc.log_path.open("ab")
        self._logs.append(log)
        log.write(f"\n--- {time.strftime('%Y-%m-%d %H:%M:%S')} {shlex.join(svc.argv)}\n".encode())
        log.flush()
        svc.log_start = log.tell()
        step(f"starting {svc.what}")
        svc.proc = subprocess.Popen(
            svc.argv,
            cwd=ROOT,
            env={**self.env, **svc.env},
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.services.append(svc)
        deadline = time.monotonic() + timeout_s
        while not svc.ready(svc):
            if not svc.alive():
                raise StartError(svc, "stopped while starting")
            if time.monotonic() > deadline:
                raise StartError(svc, f"not ready within {timeout_s:g} s")
            time.sleep(POLL_S)
        done(f"{svc.what} (pid {svc.proc.pid})")
        return svc

    def dead(self) -> list[Service]:
        return [s for s in self.services if not s.alive()]

    def stop(self, names: Sequence[str], timeout_s: float, on_wait: Callable[[], None]) -> None:
        """SIGTERM the main process of each named service; SIGKILL its group after the timeout."""
        chosen = [s for s in self.services if s.name in names and s.alive()]
        for svc in chosen:
            assert svc.proc is not None
            with contextlib.suppress(ProcessLookupError):
                svc.proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while any(s.alive() for s in chosen) and time.monotonic() < deadline:
            on_wait()
            time.sleep(POLL_S)
        for svc in chosen:
            if svc.alive():
                say(f"  !!  {svc.name} did not stop in {timeout_s:g} s: killed")
                self.kill(svc)

    def kill(self, svc: Service) -> None:
        if svc.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(svc.proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            svc.proc.wait(10)

    def sweep(self) -> None:
        """SIGKILL every process group we started: whatever a process left behind goes too."""
        for svc in self.services:
            self.kill(svc)
        for log in self._logs:
            log.close()


class StartError(RuntimeError):
    def __init__(self, svc: Service, why: str) -> None:
        super().__init__(f"{svc.what} {why}; its log ({svc.log_path}) ends with:\n{svc.log_tail()}")


def process_exists(pid: int) -> bool:
    """Signal 0: nothing is sent, only whether the pid exists is checked."""
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True  # another user's process
    except (ProcessLookupError, OverflowError):
        return False
    return True
