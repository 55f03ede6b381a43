"""The worker's own watch on its broker: a partition is logged within seconds.

Celery notices a dead broker connection when a call on it fails, and kombu's
Redis health checks (``health_check_interval`` in the transport options) run on
the worker's event loop - which a synchronous broker call on a cut-off link
(an acknowledgement, say) blocks until its socket timeouts and redis-py's own
retries run out. Measured in the cluster drills: a worker cut off from Redis
logged nothing for over a minute. So the main process of each worker also runs
this thread: every ``INTERVAL_S`` it pings the broker on a connection of its own
(short socket timeouts, no retries), logs the first failed ping at once
("broker unreachable from this worker ...", then once a minute while it lasts)
and the recovery when a ping answers again. ``deploy.health worker`` checks the
broker from the worker's machine the same way, so the probe says so too.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import Any

log = logging.getLogger("workers.broker")

INTERVAL_S = 2.0
REPEAT_S = 60.0


class BrokerWatch(threading.Thread):
    def __init__(self, app: Any, interval_s: float = INTERVAL_S) -> None:
        super().__init__(name="broker-watch", daemon=True)
        self.app = app
        self.interval_s = interval_s
        self.stopped = threading.Event()
        self.down_since: float | None = None

    def ping(self) -> None:
        with self.app.connection_for_write(transport_options={
            **self.app.conf.broker_transport_options,
            "socket_timeout": self.interval_s, "socket_connect_timeout": self.interval_s,
            "retry_on_timeout": False,
        }) as conn:  # fmt: skip
            conn.ensure_connection(max_retries=0, timeout=self.interval_s)
            conn.default_channel.client.ping()

    def run(self) -> None:
        logged = 0.0
        while not self.stopped.wait(self.interval_s):
            try:
                self.ping()
            except Exception as exc:  # every failure means the same: no broker from here
                now = time.monotonic()
                if self.down_since is None:
                    self.down_since, logged = now, now
                    log.error("broker unreachable from this worker: %s: %s",
                              type(exc).__name__, exc)  # fmt: skip
                elif now - logged >= REPEAT_S:
                    logged = now
                    log.error("broker unreachable from this worker for %.0f s: %s",
                              now - self.down_since, exc)  # fmt: skip
                continue
            touch_alive_file()
            if self.down_since is not None:
                log.warning("broker reachable again after %.0f s",
                            time.monotonic() - self.down_since)  # fmt: skip
                self.down_since = None


def touch_alive_file() -> None:
    """Mark this worker alive and its broker reachable (``LADDER_WORKER_ALIVE_FILE``).

    A container healthcheck then reads the file's age with the shell
    (``deploy/probe.sh fresh``) instead of starting an interpreter per probe, which took
    6-9 s on a host at load 30-40 and made healthy workers flap to unhealthy.
    """
    from django.conf import settings

    path = settings.LADDER_WORKER_ALIVE_FILE
    if path:
        try:
            Path(path).touch()
        except OSError as exc:
            log.warning("cannot touch LADDER_WORKER_ALIVE_FILE %s: %s", path, exc)


def start(app: Any) -> BrokerWatch | None:
    """Start the watch for a Redis broker (the embedded broker is local files)."""
    if app.conf.broker_transport not in (None, "redis") and "redis" not in str(app.conf.broker_url):
        return None
    watch = BrokerWatch(app)
    watch.start()
    return watch
