"""The workers' Celery app: ``celery -A workers.celery_app worker`` (and ``beat``).

Configured from the Django settings (``CELERY_*`` in ``ladder/settings/celery.py``;
docs/workers.md says why each value is what it is). The ladder sends to the
same broker by task name and never imports this module.

gRPC is never touched at import: channels are created by each pool process
after the fork, when it plays its first match (a channel made before a fork hangs in the
child). Fork support in
grpcio is switched off explicitly rather than left to the version's default.
With ``LADDER_METRICS_PORT`` set, the pool's metrics are summed across its
processes (prometheus-client's multiprocess mode, ``workers.metrics``).
"""

from __future__ import annotations

import logging
import os

os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ladder.settings")

# Before anything imports grpc: grpcio reads its I/O settings then (digdown.game_io).
import digdown.game_io
from telemetry.metrics import metrics_port, prepare_group

# A worker that serves metrics sums its pool children's: the samples' directory must be
# set before anything imports prometheus_client (workers.metrics does, through the tasks).
if metrics_port():
    prepare_group("worker")

from celery import Celery
from celery.signals import after_setup_logger, beat_init, worker_ready

from telemetry.logs import json_wanted, use_json_on_root

app = Celery(
    "workers", include=["workers.tasks", "workers.notifications", "workers.competition_tasks"]
)
app.config_from_object("django.conf:settings", namespace="CELERY")


@after_setup_logger.connect
def _json_logs(**_: object) -> None:
    """Celery sets up the worker's logging itself; LADDER_LOG_FORMAT=json re-formats it."""
    if json_wanted():
        use_json_on_root()


@worker_ready.connect
def _watch_broker(**_: object) -> None:
    """The main process watches its broker link itself (workers/broker_watch.py)."""
    from workers import broker_watch

    broker_watch.start(app)


@worker_ready.connect
def _say_grpc_io(**_: object) -> None:
    """The start-up log says how the pool's matches reach the engine and the bots."""
    logging.getLogger("workers").info("match runner: %s", digdown.game_io.CHOSEN)


@beat_init.connect
def _serve_ladder_state(**_: object) -> None:
    """Beat serves the ladder's state metrics (queued, running, oldest wait, the last hour's
    finished and errored, media disk use) on ``LADDER_METRICS_PORT``.

    They are read from the database at each scrape, so one process per ladder must serve
    them, and beat is exactly one. The web's ``/metrics`` page has them too, but only for
    ``LADDER_METRICS_ALLOW`` (loopback): in compose Prometheus could not read them there
    and four of the seven alerts could never fire (docs/operations.md, "Monitoring").
    """
    import django

    from telemetry.metrics import serve

    django.setup()
    from ladder.web.metrics import LadderCollector

    serve(extra=LadderCollector())
