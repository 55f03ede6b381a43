"""A process's Prometheus metrics: one process, or a group of them (gunicorn, Celery prefork).

prometheus-client's multiprocess mode is the documented way for forking
servers: every process writes its samples to files in one directory
(``PROMETHEUS_MULTIPROC_DIR``) and whoever is scraped sums the files. Two
things follow from how the library works, and are why this module exists:

- the directory must be in the environment before the first metric is made
  (the library picks its value class at import; `prepare_group` picks it again
  if something imported the library first), so the parent of a group calls
  `prepare_group` before it imports the modules that define metrics;
- it must start empty (files of an earlier run would be summed in), and a
  process that exits must be marked dead so its live gauges stop counting.

Settings (environment): ``LADDER_METRICS_PORT`` the port this process serves
``/metrics`` on (empty or 0: none; the web serves it on its own port too),
``LADDER_METRICS_ADDR`` the address to bind (default 127.0.0.1: an operator who
scrapes from another machine sets 0.0.0.0 and keeps the port off the internet).
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger("telemetry")

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
PORT_ENV = "LADDER_METRICS_PORT"
ADDR_ENV = "LADDER_METRICS_ADDR"


def metrics_port() -> int:
    """This process's metrics port from the environment (0: no metrics server)."""
    value = os.environ.get(PORT_ENV, "").strip()
    try:
        return max(0, int(value)) if value else 0
    except ValueError:
        log.warning("%s=%r is not a port number: no metrics server", PORT_ENV, value)
        return 0


def metrics_addr() -> str:
    return os.environ.get(ADDR_ENV, "").strip() or "127.0.0.1"


def prepare_group(name: str) -> Path:
    """Make this process the parent of a multiprocess group; returns the samples' directory.

    An operator's ``PROMETHEUS_MULTIPROC_DIR`` is emptied and used; without one a
    fresh directory is made (and removed at exit). Children inherit it through
    the environment. Called again in the same process, it changes nothing.
    """
    existing = os.environ.get(MULTIPROC_ENV, "").strip()
    if existing and os.environ.get("_LADDER_METRICS_GROUP") == str(os.getpid()):
        return Path(existing)
    if existing:
        path = Path(existing)
        path.mkdir(parents=True, exist_ok=True)
        for stale in path.glob("*.db"):
            stale.unlink(missing_ok=True)
    else:
        path = Path(tempfile.mkdtemp(prefix=f"ladder-metrics-{name}-"))
        atexit.register(_remove_if_parent, path, os.getpid())
        os.environ[MULTIPROC_ENV] = str(path)
    os.environ["_LADDER_METRICS_GROUP"] = str(os.getpid())
    values = sys.modules.get("prometheus_client.values")
    if values is not None:
        # Imported already (a Celery CLI plugin may have): metrics made from now on write
        # to the directory; those made before stay in this process and are not exposed.
        values.ValueClass = values.get_value_class()  # type: ignore[attr-defined]
    return path


def _remove_if_parent(path: Path, parent: int) -> None:
    """At exit, the group's parent removes the directory it made. Its children inherit the
    exit handler through fork, and one of them exiting (a recycled gunicorn worker) must
    not take the directory from the others."""
    if os.getpid() == parent:
        shutil.rmtree(path, ignore_errors=True)


def multiprocess() -> bool:
    return bool(os.environ.get(MULTIPROC_ENV, "").strip())


def registry(extra: Any = None) -> Any:
    """The registry to expose: the group's summed files in multiprocess mode, else the
    process's own; with ``extra``, one more collector read at each scrape."""
    from prometheus_client import REGISTRY, CollectorRegistry
    from prometheus_client import multiprocess as mp

    if multiprocess():
        reg = CollectorRegistry()
        mp.MultiProcessCollector(reg)  # type: ignore[no-untyped-call]
    else:
        reg = REGISTRY
    if extra is None:
        return reg
    combined = CollectorRegistry()
    combined.register(_Both(reg, extra))
    return combined


def exposition(extra: Any = None) -> tuple[bytes, str]:
    """The text exposition of `registry` and its content type."""
    from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

    return generate_latest(registry(extra)), CONTENT_TYPE_LATEST


class _Both:
    """A collector that yields what a registry and one more collector yield."""

    def __init__(self, reg: Any, extra: Any) -> None:
        self.reg, self.extra = reg, extra

    def collect(self) -> Any:
        yield from self.reg.collect()
        yield from self.extra.collect()


def serve(port: int | None = None, addr: str | None = None, extra: Any = None) -> int:
    """Serve ``/metrics`` on a thread of this process; returns the bound port (0: none).

    ``port`` None reads ``LADDER_METRICS_PORT``. A port that is taken is logged and
    skipped: metrics must never keep a worker or the engine from starting.
    """
    from prometheus_client import start_http_server

    port = metrics_port() if port is None else port
    if not port:
        return 0
    try:
        server, _thread = start_http_server(port, addr or metrics_addr(), registry=registry(extra))
    except OSError as exc:
        log.warning("metrics not served: port %s: %s", port, exc)
        return 0
    bound = int(server.server_address[1])
    log.info("metrics on http://%s:%d/metrics", addr or metrics_addr(), bound)
    return bound


def mark_dead(pid: int) -> None:
    """A process of the group exited: its live gauges stop counting (counters stay)."""
    if multiprocess():
        from prometheus_client import multiprocess as mp

        mp.mark_process_dead(pid)  # type: ignore[no-untyped-call]
