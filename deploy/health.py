"""Health probes for the processes that are not gRPC servers (docker-compose.yml healthchecks).

    python -m deploy.health http http://127.0.0.1:8000/      # the web server answers (< 500)
    python -m deploy.health worker                            # the broker answers here, and
                                                              # this machine's worker pings
    python -m deploy.health beat /data/var/celerybeat-schedule --max-age 600

Exit 0 when healthy, 1 (with the reason on stderr) otherwise; every probe has a
deadline. gRPC servers (engine, ladder-grpc) use ``python -m digdown.healthcheck``.
Beat has no way to be asked; its schedule file is rewritten each time it sends a
task (the janitor, every ``LADDER_JANITOR_INTERVAL_S``), so a file older than a few
intervals means beat is stuck.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m deploy.health", description=__doc__)
    sub = p.add_subparsers(dest="probe", required=True)
    http = sub.add_parser("http", help="GET a URL; healthy when it answers below 500")
    http.add_argument("url")
    http.add_argument("--timeout", type=float, default=5.0)
    worker = sub.add_parser("worker", help="ping the Celery worker node NAME@this-host")
    worker.add_argument("--name", default="worker", help="node name before @ (default worker)")
    worker.add_argument("--timeout", type=float, default=5.0)
    beat = sub.add_parser("beat", help="beat's schedule file was written recently")
    beat.add_argument("schedule", type=Path)
    beat.add_argument("--max-age", type=float, default=600.0, help="seconds (default 600)")
    return p.parse_args(argv)


def probe_http(url: str, timeout_s: float) -> str:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as reply:
            status = int(reply.status)
    except urllib.error.HTTPError as exc:
        status = exc.code
    except (urllib.error.URLError, OSError) as exc:
        return f"{url}: {exc}"
    return "" if status < 500 else f"{url}: HTTP {status}"


def probe_worker(name: str, timeout_s: float) -> str:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")
    from workers.celery_app import app

    node = f"{name}@{socket.gethostname()}"
    # First the broker itself, from this machine: a worker cut off from it looks idle
    # to everyone else, and "did not answer a ping" would not say why.
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=timeout_s)
            client = getattr(conn.default_channel, "client", None)
            if client is not None:
                client.ping()
    except Exception as exc:  # kombu/redis raise many kinds; every one means unreachable
        return f"{node}: broker unreachable from this machine: {type(exc).__name__}: {exc}"
    replies = app.control.ping(destination=[node], timeout=timeout_s)
    if not any(node in reply for reply in replies):
        return f"{node} did not answer a ping"
    # Healthy; also say how it runs hosted bots (sandbox, seccomp, cgroup or rlimits mode).
    for reply in app.control.broadcast(
        "sandbox", destination=[node], reply=True, timeout=timeout_s
    ):
        if node in reply:
            status = reply[node]
            print(
                f"{node}: sandbox {status.get('sandbox')}, seccomp {status.get('seccomp')}, "
                f"resources {status.get('resources')} ({status.get('resources_detail')})"
            )
    return ""


def probe_beat(schedule: Path, max_age_s: float) -> str:
    # shelve may add a suffix (.db, .dat) depending on the dbm module.
    files = [p for p in schedule.parent.glob(schedule.name + "*") if p.is_file()]
    if not files:
        return f"{schedule}: no schedule file yet"
    age = time.time() - max(p.stat().st_mtime for p in files)
    return "" if age <= max_age_s else f"{schedule}: last written {age:.0f} s ago"


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.probe == "http":
        why = probe_http(args.url, args.timeout)
    elif args.probe == "worker":
        why = probe_worker(args.name, args.timeout)
    else:
        why = probe_beat(args.schedule, args.max_age)
    if why:
        print(why, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
