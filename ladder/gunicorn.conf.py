"""Gunicorn settings for the ladder's web process (the production WSGI server).

Run: ``gunicorn -c ladder/gunicorn.conf.py ladder.wsgi:application`` (compose and
``make run`` do). Django's ``runserver`` is for development only: it is single-process
and stalls on kept-alive responses.

Every value can be changed without editing this file (environment variables below,
or gunicorn's own ``GUNICORN_CMD_ARGS``, which wins over this file):

LADDER_WEB_BIND          address to listen on (default ``0.0.0.0:8000``)
LADDER_WEB_WORKERS       worker processes (default ``2 * cores + 1``, at most 8)
LADDER_WEB_THREADS       threads per worker (default 4): a request waiting on the
                         database or storage does not block the others of its worker
LADDER_WEB_TIMEOUT       seconds a worker may be silent before it is restarted (default 30)
LADDER_WEB_KEEPALIVE     seconds to keep an idle connection open (default 5); behind a
                         proxy that keeps connections, set it above the proxy's idle
                         timeout so the proxy closes first
LADDER_WEB_ACCESS_LOG    access log file, ``-`` for stdout (default), empty to disable

Static files are served by WhiteNoise inside the application (``collectstatic`` first);
no separate static server is needed. Client addresses for throttles and failed-login
limits come from ``LADDER_NUM_PROXIES`` in Django, not from gunicorn's
``forwarded_allow_ips`` (which only affects the scheme it reports).
"""

from __future__ import annotations

import multiprocessing
import os


def _int(name: str, default: int) -> int:
    """An integer setting from the environment, with a default when unset or empty."""
    value = os.environ.get(name, "").strip()
    return int(value) if value else default


bind = [os.environ.get("LADDER_WEB_BIND", "0.0.0.0:8000")]

# Threads share a process's database connections and memory; processes give isolation
# and use every core. 2 * cores + 1 is gunicorn's own advice, capped for small hosts
# with many cores but little memory.
workers = _int("LADDER_WEB_WORKERS", min(2 * multiprocessing.cpu_count() + 1, 8))
worker_class = "gthread"
threads = _int("LADDER_WEB_THREADS", 4)

# A request that takes longer than this is a bug or an attack: the worker is restarted
# and the client gets a 502 from the proxy (uploads are capped in size by Django).
timeout = _int("LADDER_WEB_TIMEOUT", 30)
graceful_timeout = 30
keepalive = _int("LADDER_WEB_KEEPALIVE", 5)

# Restart workers now and then so a slow leak never takes a process down.
max_requests = 2000
max_requests_jitter = 200

# Bounds on what a client may send before Django sees it (gunicorn's defaults, explicit).
limit_request_line = 4094
limit_request_fields = 100
limit_request_field_size = 8190

# The heartbeat file lives in memory (a container's overlay disk can stall it).
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None

# No control socket: it defaults to a fixed path in $HOME, which several servers on one
# host (tests, a second instance) would fight over.
control_socket_disable = True

# Logs: errors to stderr; the access log with the request id the application returns in
# X-Request-ID (ladder.common.request_id), so an access line and the application's log
# lines for one request share an id. %(L)s is the request time in seconds.
errorlog = "-"
loglevel = os.environ.get("LADDER_LOG_LEVEL", "info").lower()
_access = os.environ.get("LADDER_WEB_ACCESS_LOG", "-")
accesslog = _access or None
access_log_format = '%(h)s "%(r)s" %(s)s %(B)s %(L)ss request_id=%({x-request-id}o)s "%(a)s"'
proc_name = "ladder-web"

# Metrics: the workers' samples are summed through prometheus-client's multiprocess mode,
# whose directory must be set before any worker imports the library (ladder/web/metrics.py
# serves them at /metrics; LADDER_METRICS_PORT also serves them from this master process,
# on a port that can stay private while the site is public).


def on_starting(server: object) -> None:
    from telemetry.metrics import prepare_group

    prepare_group("web")


def when_ready(server: object) -> None:
    from telemetry.metrics import serve

    serve()


def child_exit(server: object, worker: object) -> None:
    from telemetry.metrics import mark_dead

    mark_dead(int(getattr(worker, "pid", 0)))


# Garbage collection: a worker holds a few hundred thousand long-lived objects (Django,
# DRF, gRPC stubs, compiled templates and URL resolvers), and each full collection
# walked them all: 80-100 ms of CPU inside whichever request triggered it, a spike in
# that read's p95 unrelated to what it does. Freezing moves the objects alive at that
# point out of the collector's sight (they are never freed anyway); frozen once the
# application is loaded and again after the worker's first requests, which build the
# rest (templates, resolvers, serializer fields). Each freeze is O(1); a cycle that is
# garbage at that moment stays allocated, bounded by the few freezes before the worker
# is recycled (``max_requests``).
GC_FREEZE_AFTER_REQUESTS = (16, 256)


def post_worker_init(worker: object) -> None:
    import gc

    gc.freeze()


def post_request(worker: object, req: object, environ: object, resp: object) -> None:
    import gc

    done = getattr(worker, "gc_freezes", 0)
    if (
        done < len(GC_FREEZE_AFTER_REQUESTS)
        and getattr(worker, "nr", 0) >= (GC_FREEZE_AFTER_REQUESTS[done])
    ):
        worker.gc_freezes = done + 1  # type: ignore[attr-defined]
        gc.freeze()
